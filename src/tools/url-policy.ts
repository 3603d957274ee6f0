/**
 * The network policy of the tools that reach the web (`web_fetch`, `browser_read`): one place decides which URLs
 * may be fetched. Only `http(s)`, no credentials in the URL, the deny list first, then the allow list; a host not
 * explicitly allowed must resolve only to public addresses (no loopback, private, link-local or metadata
 * addresses: SSRF).
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { MinaraError } from '../errors/minara-error';

/** The host lists and resolver of a {@link UrlPolicy}. */
export interface UrlPolicyOptions {
  /**
   * Hosts that may be fetched: exact (`api.coingecko.com`) or a subdomain wildcard (`*.example.com`). When given,
   * every other host is refused. Listing a host here also allows it when it resolves to a private address.
   * @default any public host
   */
  readonly allowHosts?: readonly string[] | undefined;
  /** Hosts never fetched (checked first), same forms. */
  readonly denyHosts?: readonly string[] | undefined;
  /** Host → addresses (tests). @default DNS */
  readonly resolve?: ((host: string) => Promise<readonly string[]>) | undefined;
}

/** A URL check: resolves when the URL may be fetched, throws `TOOL_BLOCKED` naming why otherwise. */
export interface UrlPolicy {
  check(url: URL): Promise<void>;
}

const hostMatches = (host: string, pattern: string) => (pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) || host === pattern.slice(2) : host === pattern);

/** Whether an address is one other machines' services live on (not loopback, private, link-local, …). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/** Build the policy; bad list entries are a `CONFIG_INVALID` naming the factory and field. */
export function createUrlPolicy(factory: string, options: UrlPolicyOptions): UrlPolicy {
  const { allowHosts, denyHosts = [] } = options;
  const resolve = options.resolve ?? (async (host: string) => (await lookup(host, { all: true })).map((a) => a.address));
  for (const [field, list] of [['allowHosts', allowHosts ?? []], ['denyHosts', denyHosts]] as const) {
    for (const h of list) if (typeof h !== 'string' || !/^(\*\.)?[a-z0-9.-]+$/i.test(h)) throw new MinaraError('CONFIG_INVALID', `${factory}: ${field} entries are hosts or *.domain, got ${JSON.stringify(h)}.`);
  }
  return {
    async check(url) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MinaraError('TOOL_BLOCKED', `url: only http and https are fetched, not ${url.protocol}`);
      if (url.username || url.password) throw new MinaraError('TOOL_BLOCKED', 'url: credentials in a URL are refused');
      const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
      if (denyHosts.some((p) => hostMatches(host, p.toLowerCase()))) throw new MinaraError('TOOL_BLOCKED', `url: ${host} is on the deny list`);
      const allowed = allowHosts?.some((p) => hostMatches(host, p.toLowerCase())) ?? false;
      if (allowHosts && !allowed) throw new MinaraError('TOOL_BLOCKED', `url: ${host} is not on the allow list`);
      if (allowed) return;
      const addresses = ipaddr.isValid(host) ? [host] : await resolve(host).catch(() => [] as string[]);
      if (addresses.length === 0) throw new MinaraError('TOOL_BLOCKED', `url: ${host} does not resolve`);
      const inner = addresses.find((a) => !isPublicAddress(a));
      if (inner !== undefined) throw new MinaraError('TOOL_BLOCKED', `url: ${host} resolves to a non-public address (${inner}); list the host in allowHosts to fetch it`);
    },
  };
}

/** Read at most `maxBytes` of a response body (the rest is cancelled); `cut` says whether it was longer. */
export async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(0), cut: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const room = maxBytes - size;
    if (value.length > room) {
      chunks.push(value.subarray(0, room));
      size += room;
      cut = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  return { bytes: Buffer.concat(chunks), cut };
}
