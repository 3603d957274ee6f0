/**
 * The network policy of the tools that reach the web (`web_fetch`, `browser_read`): one place decides which URLs
 * may be fetched. Only `http(s)`, no credentials in the URL, the deny list first, then the allow list; a host not
 * explicitly allowed must resolve only to public addresses (no loopback, private, link-local or metadata
 * addresses: SSRF).
 *
 * The address is checked where the connection is made, not only before: {@link UrlPolicy.fetch} connects through
 * an undici `Agent` whose `lookup` resolves the host with the policy's resolver and refuses a non-public answer,
 * so a host that resolves to a public address for the check and to `127.0.0.1` a moment later (DNS rebinding)
 * is refused at connect time. undici is the HTTP client Node's own `fetch` is built on; its `connect.lookup`
 * hook is the documented way to pin resolution, which the global `fetch` does not expose.
 */
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { Agent, fetch as UndiciFetch } from 'undici';
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
  /**
   * `fetch` that connects only to addresses the policy accepts, re-resolved at connect time (DNS rebinding is
   * refused with `TOOL_BLOCKED`). Call {@link UrlPolicy.check} first for the scheme, credential and list rules.
   */
  fetch(url: URL, init: RequestInit): Promise<Response>;
}

/** What `net.connect` passes a custom `lookup` (Node calls it with `all: true` when it races address families). */
type ConnectLookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

const hostMatches = (host: string, pattern: string) => (pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) || host === pattern.slice(2) : host === pattern);

/** An IPv6 address as a URL host reads it (`::127.0.0.1` → `::7f00:1`); undefined when a URL would not take it. */
function canonicalIPv6(address: string): string | undefined {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** The IPv4 address two 16-bit groups of an IPv6 address carry. */
const ipv4Of = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * Whether an address is one other machines' services live on (not loopback, private, link-local, …). An IPv6
 * address that carries an IPv4 address is judged by the IPv4 address inside (ranges as ipaddr.js names them):
 * IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d` (RFC 6145), NAT64 `64:ff9b::a.b.c.d`
 * (RFC 6052) and 6to4 `2002:aabb:ccdd::/48`. The deprecated IPv4-compatible form `::a.b.c.d` (RFC 4291), the
 * local-use NAT64 prefix `64:ff9b:1::/48` (RFC 8215, where the IPv4 bits sit by prefix length) and Teredo are
 * never public.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // IPv6 text is read the way the connection will read it (the WHATWG URL parser): ipaddr.js reads `::8.8.8.8`
  // as the mapped `::ffff:8.8.8.8`, where it is the IPv4-compatible `::808:808`.
  const canonical = address.includes(':') ? canonicalIPv6(address) : address;
  if (canonical === undefined || !ipaddr.isValid(canonical)) return false;
  const parsed = ipaddr.parse(canonical);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const g = v6.parts;
  // ::/96: the unspecified address, loopback and IPv4-compatible addresses (`[::127.0.0.1]`): never public.
  if (g.slice(0, 6).every((x) => x === 0)) return false;
  switch (v6.range()) {
    case 'unicast':
      return true;
    case 'ipv4Mapped':
    case 'rfc6145':
      return ipv4Of(g[6]!, g[7]!).range() === 'unicast';
    case 'rfc6052':
      // Only the well-known prefix 64:ff9b::/96 carries the IPv4 address in its last 32 bits.
      return g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0) && ipv4Of(g[6]!, g[7]!).range() === 'unicast';
    case '6to4':
      return ipv4Of(g[1]!, g[2]!).range() === 'unicast';
    default:
      return false;
  }
}

/** Build the policy; bad list entries are a `CONFIG_INVALID` naming the factory and field. */
export function createUrlPolicy(factory: string, options: UrlPolicyOptions): UrlPolicy {
  const { allowHosts, denyHosts = [] } = options;
  // node:dns/promises loads with the first lookup, not with the package.
  const resolve = options.resolve ?? (async (host: string) => (await (await import('node:dns/promises')).lookup(host, { all: true })).map((a) => a.address));
  for (const [field, list] of [['allowHosts', allowHosts ?? []], ['denyHosts', denyHosts]] as const) {
    for (const h of list) if (typeof h !== 'string' || !/^(\*\.)?[a-z0-9.-]+$/i.test(h)) throw new MinaraError('CONFIG_INVALID', `${factory}: ${field} entries are hosts or *.domain, got ${JSON.stringify(h)}.`);
  }
  const hostAllowed = (host: string) => allowHosts?.some((p) => hostMatches(host, p.toLowerCase())) ?? false;
  /** Resolve `host` and refuse a non-public answer unless the host is explicitly allowed. */
  const addressesFor = async (host: string): Promise<string[]> => {
    const addresses = ipaddr.isValid(host) ? [host] : [...(await resolve(host).catch(() => [] as string[]))];
    if (addresses.length === 0) throw new MinaraError('TOOL_BLOCKED', `url: ${host} does not resolve`);
    if (hostAllowed(host)) return addresses;
    const inner = addresses.find((a) => !isPublicAddress(a));
    if (inner !== undefined) throw new MinaraError('TOOL_BLOCKED', `url: ${host} resolves to a non-public address (${inner}); list the host in allowHosts to fetch it`);
    return addresses;
  };
  const connectLookup = (hostname: string, options: { all?: boolean | undefined }, callback: ConnectLookupCallback): void => {
    addressesFor(hostname.toLowerCase().replace(/^\[|\]$/g, '')).then(
      (addresses) => {
        const entries = addresses.map((address) => ({ address, family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4 }));
        if (options.all === true) callback(null, entries);
        else callback(null, (entries[0] as LookupAddress).address, (entries[0] as LookupAddress).family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, ''),
    );
  };
  let agent: Agent | undefined;
  return {
    async fetch(url, init) {
      // undici loads on the first fetch, not with the package (~100 ms of a cold start).
      const undici = await import('undici');
      agent ??= new undici.Agent({ connect: { lookup: connectLookup } });
      try {
        return (await undici.fetch(url, { ...(init as unknown as NonNullable<Parameters<typeof UndiciFetch>[1]>), dispatcher: agent })) as unknown as Response;
      } catch (error) {
        // undici reports a refused connect as `TypeError: fetch failed` with the lookup's error as the cause.
        const cause = error instanceof Error ? error.cause : undefined;
        if (cause instanceof MinaraError) throw cause;
        throw error;
      }
    },
    async check(url) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MinaraError('TOOL_BLOCKED', `url: only http and https are fetched, not ${url.protocol}`);
      if (url.username || url.password) throw new MinaraError('TOOL_BLOCKED', 'url: credentials in a URL are refused');
      const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
      if (denyHosts.some((p) => hostMatches(host, p.toLowerCase()))) throw new MinaraError('TOOL_BLOCKED', `url: ${host} is on the deny list`);
      const allowed = hostAllowed(host);
      if (allowHosts && !allowed) throw new MinaraError('TOOL_BLOCKED', `url: ${host} is not on the allow list`);
      if (allowed) return;
      await addressesFor(host);
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
