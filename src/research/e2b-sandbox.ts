/**
 * The e2b adapter of `run_code`: Python in an e2b cloud sandbox (a Firecracker microVM with the code-interpreter
 * template), over e2b's HTTP API. One sandbox per run, created without internet access, killed when the run ends.
 *
 * The API key reaches only e2b's API host: it is sent as `X-API-KEY` on the create and kill requests to `apiUrl`
 * and nowhere else; the run itself goes to the sandbox's own host with the per-sandbox access token the create
 * call returned. No request follows a redirect, key-bearing endpoints must be https (plain http only on loopback,
 * for tests), and both secrets are cut out of every error message.
 */
import { MinaraError } from '../errors/minara-error';
import { providerBaseUrl, providerRequest } from '../tools/search-providers';
import { redactSecrets } from '../safety/secret-patterns';
import type { CodeSandbox, CodeSandboxLimits, CodeSandboxResult } from './quickjs-sandbox';

/** Options of {@link createE2bSandbox}. */
export interface E2bSandboxOptions extends CodeSandboxLimits {
  /** `E2B_API_KEY`. */
  readonly apiKey: string;
  /** The control-plane API. @default https://api.e2b.app */
  readonly apiUrl?: string | undefined;
  /** The sandbox template. @default 'code-interpreter-v1' */
  readonly template?: string | undefined;
  /** The base URL of a sandbox's code-interpreter port. @default `https://49999-<sandboxId>.<domain>` (domain from the create answer, else e2b.app) */
  readonly sandboxUrl?: ((sandboxId: string, domain: string) => string) | undefined;
  /** Characters of the input's JSON. @default 2 MiB */
  readonly maxInputBytes?: number | undefined;
  /** The fetch used (tests). @default globalThis.fetch */
  readonly fetch?: typeof fetch | undefined;
}

const RESULT_MARKER = '__MINARA_RESULT__';

/** The Python around the model's code: `data` from the input JSON, `result` printed as JSON after a marker. */
function wrapPython(code: string, inputJson: string): string {
  return [
    'import json as __minara_json',
    `data = __minara_json.loads(${JSON.stringify(inputJson)})`,
    'result = None',
    code,
    `print("\\n${RESULT_MARKER}" + __minara_json.dumps(result, default=str))`,
  ].join('\n');
}

/**
 * A {@link CodeSandbox} for Python on e2b (`engine: 'e2b'`). The code sets `result` (any JSON-serialisable value);
 * the input is `data`; `print` output comes back as `logs`.
 *
 * @example
 * ```ts
 * const python = createE2bSandbox({ apiKey: process.env.E2B_API_KEY! });
 * const tools = createRunCodeTools({ python });
 * ```
 */
export function createE2bSandbox(options: E2bSandboxOptions): CodeSandbox {
  if (typeof options?.apiKey !== 'string' || options.apiKey.trim() === '') throw new MinaraError('CONFIG_INVALID', 'createE2bSandbox: "apiKey" (E2B_API_KEY) must be a non-empty string.');
  const apiKey = options.apiKey.trim();
  const api = providerBaseUrl('apiUrl', options.apiUrl ?? 'https://api.e2b.app', true);
  const template = options.template ?? 'code-interpreter-v1';
  const timeoutDefault = options.timeoutMs ?? 30_000;
  const maxOutputDefault = options.maxOutputBytes ?? 262_144;
  const maxLogDefault = options.maxLogBytes ?? 16_384;
  const maxInputBytes = options.maxInputBytes ?? 2 * 1024 * 1024;
  const doFetch = options.fetch ?? globalThis.fetch;
  const sandboxUrl = options.sandboxUrl ?? ((id: string, domain: string) => `https://49999-${id}.${domain}`);
  const apiPath = (p: string) => new URL(`${api.pathname.replace(/\/+$/, '')}${p}`, api);

  const execute = async (base: URL, token: string | undefined, code: string, timeoutMs: number, maxBytes: number, signal: AbortSignal) => {
    const url = new URL(`${base.pathname.replace(/\/+$/, '')}/execute`, base);
    const response = await doFetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', ...(token ? { 'x-access-token': token } : {}) },
      body: JSON.stringify({ code, language: 'python' }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => {});
      throw new MinaraError('PROVIDER_ERROR', `e2b (${url.host}): the sandbox answered HTTP ${response.status}`, { retryable: response.status >= 500 });
    }
    const out = { stdout: '', stderr: '', error: undefined as { name: string; value: string } | undefined, cut: false };
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let read = 0;
    const apply = (line: string) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (msg.type === 'stdout') out.stdout += String(msg.text ?? '');
      else if (msg.type === 'stderr') out.stderr += String(msg.text ?? '');
      else if (msg.type === 'error') out.error = { name: String(msg.name ?? 'Error'), value: String(msg.value ?? '') };
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      read += value.length;
      if (read > maxBytes) {
        out.cut = true;
        await reader.cancel().catch(() => {});
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line) apply(line);
      }
    }
    if (!out.cut && buffer.trim()) apply(buffer.trim());
    return out;
  };

  return {
    engine: 'e2b',
    async run(code, input, runOptions = {}): Promise<CodeSandboxResult> {
      if (typeof code !== 'string' || code.trim() === '') throw new MinaraError('INVALID_ARGUMENT', 'code: expected Python source that sets `result`.');
      const inputJson = JSON.stringify(input ?? null);
      if (inputJson.length > maxInputBytes) throw new MinaraError('INVALID_ARGUMENT', `data: ${inputJson.length} characters of JSON; the limit is ${maxInputBytes}.`);
      const timeoutMs = Math.min(runOptions.timeoutMs ?? timeoutDefault, timeoutDefault);
      const maxOutputBytes = Math.min(runOptions.maxOutputBytes ?? maxOutputDefault, maxOutputDefault);
      const maxLogBytes = Math.min(runOptions.maxLogBytes ?? maxLogDefault, maxLogDefault);
      const signal = runOptions.signal ?? new AbortController().signal;
      const secrets = [apiKey];
      const created = (await providerRequest({
        provider: 'e2b', url: apiPath('/sandboxes'), method: 'POST', secrets, timeoutMs: 30_000, signal, fetch: doFetch,
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        // No internet inside the VM; the sandbox ends by itself shortly after the run even if the kill below is lost.
        body: JSON.stringify({ templateID: template, timeout: Math.ceil(timeoutMs / 1000) + 30, allow_internet_access: false, secure: true, metadata: { origin: 'minara run_code' } }),
      })) as { sandboxID?: unknown; envdAccessToken?: unknown; domain?: unknown };
      if (typeof created?.sandboxID !== 'string' || !/^[a-z0-9-]{1,80}$/i.test(created.sandboxID)) throw new MinaraError('PROVIDER_ERROR', 'e2b: the create answer has no valid sandboxID');
      const sandboxId = created.sandboxID;
      const token = typeof created.envdAccessToken === 'string' ? created.envdAccessToken : undefined;
      if (token) secrets.push(token);
      const domain = typeof created.domain === 'string' && /^[a-z0-9.-]+$/i.test(created.domain) ? created.domain : 'e2b.app';
      try {
        const base = providerBaseUrl('sandboxUrl', sandboxUrl(sandboxId, domain), token !== undefined);
        const out = await execute(base, token, wrapPython(code, inputJson), timeoutMs + 5_000, maxOutputBytes + maxLogBytes + 65_536, signal);
        const at = out.stdout.lastIndexOf(`\n${RESULT_MARKER}`);
        const printed = at >= 0 ? out.stdout.slice(0, at) : out.stdout;
        let logText = `${printed}${out.stderr ? `\n${out.stderr}` : ''}`.trim();
        const logsCut = logText.length > maxLogBytes;
        if (logsCut) logText = logText.slice(0, maxLogBytes);
        const logs = logText ? logText.split('\n') : [];
        if (out.error) return { ok: false, kind: 'error', message: redactSecrets(`${out.error.name}: ${out.error.value}`), logs, logsCut };
        if (out.cut) return { ok: false, kind: 'output', message: `the output is larger than ${maxOutputBytes + maxLogBytes} characters`, logs, logsCut: true };
        if (at < 0) return { ok: false, kind: 'error', message: 'the run ended without a result (did the code finish?)', logs, logsCut };
        const json = out.stdout.slice(at + RESULT_MARKER.length + 1).trim();
        if (json.length > maxOutputBytes) return { ok: false, kind: 'output', message: `the result is ${json.length} characters of JSON; the limit is ${maxOutputBytes}`, logs, logsCut };
        return { ok: true, value: JSON.parse(json) as unknown, logs, logsCut };
      } catch (error) {
        const name = error instanceof Error ? error.name : '';
        if (name === 'TimeoutError') return { ok: false, kind: 'timeout', message: `stopped after ${timeoutMs} ms`, logs: [], logsCut: false };
        if (MinaraError.isInstance(error)) throw error;
        let message = error instanceof Error ? error.message : String(error);
        for (const s of secrets) message = message.split(s).join('[redacted]');
        throw new MinaraError('PROVIDER_ERROR', `e2b: ${redactSecrets(message)}`, { retryable: true });
      } finally {
        // Kill the VM; its own timeout ends it anyway if this request is lost.
        await providerRequest({ provider: 'e2b', url: apiPath(`/sandboxes/${encodeURIComponent(sandboxId)}`), method: 'DELETE', headers: { 'x-api-key': apiKey }, secrets, timeoutMs: 10_000, signal: new AbortController().signal, fetch: doFetch }).catch(() => {});
      }
    },
    async warm() {},
    async close() {},
  };
}
