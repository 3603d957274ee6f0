/**
 * Web search providers for `web_search`: Brave Search, Tavily and a self-hosted SearXNG. Each turns a query into
 * raw results ({@link WebSearchHit}); the tool normalises them, checks every URL against the URL policy and
 * budgets calls. A provider's key is sent only to its own endpoint: requests never follow a redirect (a 3xx is an
 * error, so the key is not replayed to another host), a key-bearing endpoint must be `https` (plain `http` only on
 * loopback, for tests), and the key is cut out of every error message before it can reach a log, an event or an
 * audit row.
 */
import { ConfigError } from '../errors/subclasses';
import { MinaraError } from '../errors/minara-error';
import { redactSecrets } from '../safety/secret-patterns';

/** How recent results should be. */
export type WebSearchFreshness = 'day' | 'week' | 'month' | 'year';

/** One search request as a provider receives it. */
export interface WebSearchRequest {
  readonly query: string;
  /** Results wanted (the provider may return fewer). */
  readonly count: number;
  readonly freshness?: WebSearchFreshness | undefined;
  readonly signal: AbortSignal;
}

/** One raw result as a provider returns it, before normalisation and the URL check. */
export interface WebSearchHit {
  readonly title?: string | undefined;
  readonly url?: string | undefined;
  /** Snippet text; may contain HTML markup (Brave wraps matches in `<strong>`). */
  readonly snippet?: string | undefined;
  /** Publication date as the provider states it (ISO, or a date string). */
  readonly date?: string | undefined;
}

/**
 * A pluggable search provider. Implement `search` to add one (docs/tools.md, "Add a provider"): send the key only
 * to your endpoint (use {@link providerRequest}) and map the response to {@link WebSearchHit}s.
 */
export interface WebSearchProvider {
  /** Short name (`brave`, `tavily`, `searxng`), shown in results and errors. */
  readonly name: string;
  search(request: WebSearchRequest): Promise<WebSearchHit[]>;
}

/** Options every built-in provider takes. */
export interface ProviderBaseOptions {
  /** Per-request timeout. @default 10000 */
  readonly timeoutMs?: number | undefined;
  /** The fetch used (tests). @default globalThis.fetch */
  readonly fetch?: typeof fetch | undefined;
}

/** Options of {@link createBraveSearchProvider}. */
export interface BraveSearchOptions extends ProviderBaseOptions {
  /** The subscription token (`BRAVE_API_KEY`), sent as `X-Subscription-Token`. */
  readonly apiKey: string;
  /** @default https://api.search.brave.com */
  readonly baseUrl?: string | undefined;
}

/** Options of {@link createTavilySearchProvider}. */
export interface TavilySearchOptions extends ProviderBaseOptions {
  /** The API key (`TAVILY_API_KEY`, `tvly-…`), sent as `Authorization: Bearer`. */
  readonly apiKey: string;
  /** @default https://api.tavily.com */
  readonly baseUrl?: string | undefined;
  /** @default 'basic' (1 credit; 'advanced' costs 2) */
  readonly searchDepth?: 'basic' | 'advanced' | undefined;
}

/** Options of {@link createSearxngSearchProvider}. */
export interface SearxngSearchOptions extends ProviderBaseOptions {
  /** The instance (`SEARXNG_URL`), e.g. `http://searxng:8080`; its `search.formats` must include `json`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer` when the instance sits behind an auth proxy (`SEARXNG_API_KEY`). */
  readonly apiKey?: string | undefined;
}

/** What {@link providerRequest} needs. */
export interface ProviderRequestInit {
  readonly provider: string;
  readonly url: URL;
  readonly method?: 'GET' | 'POST' | 'DELETE' | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly body?: string | undefined;
  /** Secrets in this request (keys): cut out of every error message. */
  readonly secrets?: readonly string[] | undefined;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly fetch?: typeof fetch | undefined;
}

/** `path` under the base URL's own path (a proxy at `https://proxy/brave` keeps its prefix). */
const under = (base: URL, path: string): URL => new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base);

const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * Parse a provider endpoint. A key-bearing endpoint must be `https` (plain `http` only on a loopback host), so the
 * key never crosses a network in clear text. @throws ConfigError naming the field.
 */
export function providerBaseUrl(field: string, raw: string, carriesKey: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${field}: expected an http(s) URL, got ${JSON.stringify(raw.slice(0, 100))}`, [field]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError(`${field}: expected an http(s) URL, got ${url.protocol}`, [field]);
  if (url.username || url.password) throw new ConfigError(`${field}: put no credentials in the URL; give the key separately`, [field]);
  if (carriesKey && url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new ConfigError(`${field}: a key is sent to this endpoint, so it must be https (plain http only on localhost)`, [field]);
  }
  return url;
}

/** Replace every given secret, then anything secret-shaped, in a message. */
function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return redactSecrets(out);
}

/**
 * One request to a provider's endpoint: no redirect is followed (a 3xx is a `PROVIDER_ERROR`, so a key is never
 * replayed to the host it points at), a timeout (`PROVIDER_TIMEOUT`), 429 → `PROVIDER_RATE_LIMITED`, any other
 * non-2xx → `PROVIDER_ERROR` with a short excerpt of the body; the request's secrets are cut out of every message.
 */
export async function providerRequest(init: ProviderRequestInit): Promise<unknown> {
  const { provider, url, secrets = [], timeoutMs } = init;
  const doFetch = init.fetch ?? globalThis.fetch;
  const where = `${provider} (${url.host})`;
  let response: Response;
  try {
    response = await doFetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: { accept: 'application/json', 'user-agent': 'minara-agent (+web_search)', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)]),
    });
  } catch (error) {
    if (init.signal.aborted) throw new MinaraError('TOOL_ABORTED', `${where}: the search was cancelled`);
    const name = error instanceof Error ? error.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') throw new MinaraError('PROVIDER_TIMEOUT', `${where}: no answer within ${timeoutMs} ms`, { retryable: true });
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    throw new MinaraError('PROVIDER_ERROR', scrub(`${where}: request failed${cause}`, secrets), { retryable: true });
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => {});
    throw new MinaraError('PROVIDER_ERROR', `${where}: answered with a redirect (HTTP ${response.status}); redirects are not followed, so the key stays with this host`);
  }
  const text = await response.text().catch(() => '');
  if (response.status === 429) throw new MinaraError('PROVIDER_RATE_LIMITED', `${where}: rate limited (HTTP 429)`, { retryable: true });
  if (!response.ok) {
    const excerpt = text.replace(/\s+/g, ' ').slice(0, 200);
    throw new MinaraError('PROVIDER_ERROR', scrub(`${where}: HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`, secrets), { retryable: response.status >= 500 });
  }
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MinaraError('PROVIDER_ERROR', `${where}: the answer is not JSON`);
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
const requireKey = (field: string, key: unknown): string => {
  if (typeof key !== 'string' || key.trim() === '') throw new ConfigError(`${field}: expected a non-empty API key`, [field]);
  return key.trim();
};
const checkTimeout = (timeoutMs: number | undefined): number => {
  const t = timeoutMs ?? 10_000;
  if (!(Number.isFinite(t) && t > 0)) throw new ConfigError(`timeoutMs: expected a positive number of milliseconds, got ${String(timeoutMs)}`, ['timeoutMs']);
  return t;
};

const BRAVE_FRESHNESS: Record<WebSearchFreshness, string> = { day: 'pd', week: 'pw', month: 'pm', year: 'py' };

/**
 * Brave Search (`GET /res/v1/web/search`, key in `X-Subscription-Token`). Results come from `web.results[]`
 * (`title`, `url`, `description`, `page_age` / `age`).
 *
 * @example
 * ```ts
 * const tools = createWebSearchTools({ provider: createBraveSearchProvider({ apiKey: process.env.BRAVE_API_KEY! }) });
 * ```
 */
export function createBraveSearchProvider(options: BraveSearchOptions): WebSearchProvider {
  const apiKey = requireKey('apiKey', options?.apiKey);
  const base = providerBaseUrl('baseUrl', options.baseUrl ?? 'https://api.search.brave.com', true);
  const timeoutMs = checkTimeout(options.timeoutMs);
  return {
    name: 'brave',
    async search({ query, count, freshness, signal }) {
      const url = under(base, '/res/v1/web/search');
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(Math.min(20, count)));
      if (freshness) url.searchParams.set('freshness', BRAVE_FRESHNESS[freshness]);
      const body = obj(await providerRequest({ provider: 'brave', url, headers: { 'x-subscription-token': apiKey }, secrets: [apiKey], timeoutMs, signal, fetch: options.fetch }));
      return arr(obj(body.web).results).map((r) => {
        const o = obj(r);
        return { title: str(o.title), url: str(o.url), snippet: str(o.description), date: str(o.page_age) ?? str(o.age) };
      });
    },
  };
}

/**
 * Tavily (`POST /search`, key in `Authorization: Bearer`). Results come from `results[]` (`title`, `url`,
 * `content`, `published_date` on news searches).
 */
export function createTavilySearchProvider(options: TavilySearchOptions): WebSearchProvider {
  const apiKey = requireKey('apiKey', options?.apiKey);
  const base = providerBaseUrl('baseUrl', options.baseUrl ?? 'https://api.tavily.com', true);
  const timeoutMs = checkTimeout(options.timeoutMs);
  const searchDepth = options.searchDepth ?? 'basic';
  return {
    name: 'tavily',
    async search({ query, count, freshness, signal }) {
      const body = obj(
        await providerRequest({
          provider: 'tavily',
          url: under(base, '/search'),
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query, max_results: Math.min(20, count), search_depth: searchDepth, include_answer: false, include_raw_content: false, include_images: false, ...(freshness ? { time_range: freshness } : {}) }),
          secrets: [apiKey],
          timeoutMs,
          signal,
          fetch: options.fetch,
        }),
      );
      return arr(body.results).map((r) => {
        const o = obj(r);
        return { title: str(o.title), url: str(o.url), snippet: str(o.content), date: str(o.published_date) };
      });
    },
  };
}

/**
 * A self-hosted SearXNG (`GET /search?format=json`; the instance must allow the `json` format). Results come from
 * `results[]` (`title`, `url`, `content`, `publishedDate`). The instance usually sits on a private address: the
 * operator configured it, so the URL policy that guards the model's fetches does not apply to this endpoint.
 */
export function createSearxngSearchProvider(options: SearxngSearchOptions): WebSearchProvider {
  if (typeof options?.baseUrl !== 'string' || options.baseUrl.trim() === '') throw new ConfigError('baseUrl (SEARXNG_URL): expected the URL of a SearXNG instance', ['baseUrl']);
  const apiKey = options.apiKey !== undefined ? requireKey('apiKey', options.apiKey) : undefined;
  const base = providerBaseUrl('baseUrl', options.baseUrl.trim(), apiKey !== undefined);
  const timeoutMs = checkTimeout(options.timeoutMs);
  return {
    name: 'searxng',
    async search({ query, count, freshness, signal }) {
      const url = under(base, '/search');
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      if (freshness) url.searchParams.set('time_range', freshness);
      const body = obj(
        await providerRequest({ provider: 'searxng', url, headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, secrets: apiKey ? [apiKey] : [], timeoutMs, signal, fetch: options.fetch }),
      );
      return arr(body.results).slice(0, count).map((r) => {
        const o = obj(r);
        return { title: str(o.title), url: str(o.url), snippet: str(o.content), date: str(o.publishedDate) };
      });
    },
  };
}

/** The provider names {@link webSearchProviderFromEnv} knows. */
export const WEB_SEARCH_PROVIDERS = ['brave', 'tavily', 'searxng'] as const;

/**
 * The search provider the environment configures, or undefined when none is. `MINARA_WEB_SEARCH` picks one
 * (`brave`, `tavily`, `searxng`; `off` for none); without it the first configured of `BRAVE_API_KEY`,
 * `TAVILY_API_KEY`, `SEARXNG_URL` is used. Endpoints can be moved with `BRAVE_BASE_URL` / `TAVILY_BASE_URL`
 * (e.g. a proxy; https only).
 *
 * @throws ConfigError when `MINARA_WEB_SEARCH` names a provider whose key or URL is missing, or an unknown one.
 */
export function webSearchProviderFromEnv(env: Readonly<Record<string, string | undefined>>): WebSearchProvider | undefined {
  const chosen = env.MINARA_WEB_SEARCH?.trim().toLowerCase();
  if (chosen === 'off' || chosen === 'none' || chosen === '0' || chosen === 'false') return undefined;
  const name = chosen || (env.BRAVE_API_KEY ? 'brave' : env.TAVILY_API_KEY ? 'tavily' : env.SEARXNG_URL ? 'searxng' : undefined);
  if (name === undefined) return undefined;
  const need = (key: string): string => {
    const v = env[key]?.trim();
    if (!v) throw new ConfigError(`MINARA_WEB_SEARCH=${name} needs ${key}`, [key]);
    return v;
  };
  switch (name) {
    case 'brave':
      return createBraveSearchProvider({ apiKey: need('BRAVE_API_KEY'), ...(env.BRAVE_BASE_URL ? { baseUrl: env.BRAVE_BASE_URL } : {}) });
    case 'tavily':
      return createTavilySearchProvider({ apiKey: need('TAVILY_API_KEY'), ...(env.TAVILY_BASE_URL ? { baseUrl: env.TAVILY_BASE_URL } : {}) });
    case 'searxng':
      return createSearxngSearchProvider({ baseUrl: need('SEARXNG_URL'), ...(env.SEARXNG_API_KEY ? { apiKey: env.SEARXNG_API_KEY } : {}) });
    default:
      throw new ConfigError(`MINARA_WEB_SEARCH: expected one of ${WEB_SEARCH_PROVIDERS.join(', ')} or off, got ${JSON.stringify(name)}`, ['MINARA_WEB_SEARCH']);
  }
}
