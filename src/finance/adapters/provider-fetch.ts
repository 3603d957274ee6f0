import { redactSecrets } from '../../safety/secret-patterns';
import type { MinaraErrorCode } from '../../errors/codes';
import { MinaraError } from '../../errors/minara-error';

/** A provider call failed: typed code, provider name, HTTP status and attempts made. */
export class ProviderError extends MinaraError {
  readonly provider: string;
  readonly status?: number | undefined;
  readonly attempts: number;
  constructor(code: Extract<MinaraErrorCode, 'PROVIDER_ERROR' | 'PROVIDER_RATE_LIMITED' | 'PROVIDER_TIMEOUT'>, provider: string, message: string, extra: { status?: number | undefined; attempts: number; retryable?: boolean; cause?: unknown }) {
    super(code, `${provider}: ${message}`, { retryable: extra.retryable ?? false, cause: extra.cause });
    this.name = 'ProviderError';
    this.provider = provider;
    this.status = extra.status;
    this.attempts = extra.attempts;
  }
}

/** Options of {@link createProviderFetch}. */
export interface ProviderFetchOptions {
  /** Name used in errors (`minara`, `coingecko`, `hyperliquid`). */
  readonly provider: string;
  readonly baseUrl: string;
  /** Headers on every request (e.g. the bearer key). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Per-attempt timeout. @default 8000 */
  readonly timeoutMs?: number | undefined;
  /** Retries after the first attempt (timeouts, 429, 5xx, network errors). @default 2 */
  readonly maxRetries?: number | undefined;
  /** First backoff; doubles per retry. @default 200 */
  readonly retryBaseMs?: number | undefined;
  /** A 429 asking to wait longer than this fails at once (PROVIDER_RATE_LIMITED, retryable). @default 5000 */
  readonly maxRetryAfterMs?: number | undefined;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch | undefined;
  /** @default setTimeout-based */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** One request. */
export interface ProviderRequest {
  readonly method?: 'GET' | 'POST' | undefined;
  readonly query?: Readonly<Record<string, string | number | undefined>> | undefined;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** A JSON client with timeouts, bounded retries and typed errors. */
export interface ProviderFetch {
  /** The parsed JSON body; throws {@link ProviderError} on anything else. */
  json(path: string, request?: ProviderRequest): Promise<unknown>;
}

/** Parse Retry-After (seconds or an HTTP date) into ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * The one HTTP helper of the real adapters. Every attempt has a timeout; timeouts, 429, 5xx and network
 * errors are retried at most `maxRetries` times (429 honours Retry-After up to `maxRetryAfterMs`); other
 * 4xx and malformed JSON fail at once. Failures are {@link ProviderError}s with `PROVIDER_TIMEOUT`,
 * `PROVIDER_RATE_LIMITED` or `PROVIDER_ERROR`; nothing is ever returned for a failed call.
 */
export function createProviderFetch(options: ProviderFetchOptions): ProviderFetch {
  const {
    provider, baseUrl, headers = {}, timeoutMs = 8_000, maxRetries = 2, retryBaseMs = 200, maxRetryAfterMs = 5_000,
    fetch: doFetch = globalThis.fetch, sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
  } = options;
  const base = baseUrl.replace(/\/+$/, '');
  // Upstream error bodies are quoted in messages; a careless upstream may echo the credentials it was sent.
  const credentials = Object.values(headers).flatMap((v) => [v, v.replace(/^Bearer\s+/i, '')]).filter((v) => v.length >= 8);
  const scrub = (text: string) => redactSecrets(credentials.reduce((t, c) => t.split(c).join('[REDACTED]'), text));

  return {
    async json(path, req = {}) {
      const url = new URL(base + (path.startsWith('/') ? path : `/${path}`));
      for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
      const method = req.method ?? (req.body === undefined ? 'GET' : 'POST');
      let last: ProviderError | undefined;
      for (let attempt = 1; attempt <= maxRetries + 1; attempt++) {
        if (req.signal?.aborted) throw new MinaraError('TOOL_ABORTED', `${provider}: request cancelled`);
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(new Error('timeout')), timeoutMs);
        const onAbort = () => controller.abort(new Error('cancelled'));
        req.signal?.addEventListener('abort', onAbort, { once: true });
        let wait = retryBaseMs * 2 ** (attempt - 1);
        try {
          const res = await doFetch(url, {
            method,
            headers: { accept: 'application/json', ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers, ...req.headers },
            ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
            signal: controller.signal,
          });
          const text = await res.text();
          if (res.status === 429) {
            const after = parseRetryAfter(res.headers.get('retry-after'));
            last = new ProviderError('PROVIDER_RATE_LIMITED', provider, `rate limited (429)${after !== undefined ? `, retry after ${Math.ceil(after / 1000)} s` : ''}`, { status: 429, attempts: attempt, retryable: true });
            if (after !== undefined && after > maxRetryAfterMs) throw last;
            if (after !== undefined) wait = after;
          } else if (res.status >= 500) {
            last = new ProviderError('PROVIDER_ERROR', provider, `server error ${res.status}`, { status: res.status, attempts: attempt, retryable: true });
          } else if (res.status >= 400) {
            throw new ProviderError('PROVIDER_ERROR', provider, `request failed with ${res.status}: ${scrub(text).slice(0, 200)}`, { status: res.status, attempts: attempt });
          } else {
            try {
              return JSON.parse(text) as unknown;
            } catch (cause) {
              throw new ProviderError('PROVIDER_ERROR', provider, `malformed JSON in the response (${scrub(text).slice(0, 60)}…)`, { status: res.status, attempts: attempt, cause });
            }
          }
        } catch (error) {
          // Final answers (other 4xx, malformed JSON, a Retry-After too long) are thrown as they are.
          if (MinaraError.isInstance(error)) throw error;
          if (req.signal?.aborted) throw new MinaraError('TOOL_ABORTED', `${provider}: request cancelled`);
          last = controller.signal.aborted
            ? new ProviderError('PROVIDER_TIMEOUT', provider, `no answer within ${timeoutMs} ms`, { attempts: attempt, retryable: true })
            : new ProviderError('PROVIDER_ERROR', provider, `network error: ${error instanceof Error ? error.message : String(error)}`, { attempts: attempt, retryable: true, cause: error });
        } finally {
          clearTimeout(timer);
          req.signal?.removeEventListener('abort', onAbort);
        }
        if (attempt <= maxRetries) await sleep(wait);
      }
      throw new ProviderError(last!.code as 'PROVIDER_ERROR', provider, `${last!.message.slice(provider.length + 2)} (after ${maxRetries + 1} attempts)`, {
        status: last!.status, attempts: maxRetries + 1, retryable: true,
      });
    },
  };
}
