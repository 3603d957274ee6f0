/**
 * IPv6 forms that carry an IPv4 address (issue 33, item 13): the URL policy judges the IPv4 address inside,
 * so `[::127.0.0.1]` (IPv4-compatible), `[::ffff:10.0.0.1]` (IPv4-mapped), NAT64 `64:ff9b::/96` and 6to4
 * `2002::/16` embedding a private address are refused, as literals in the URL and as DNS answers.
 */
import { describe, expect, it } from 'vitest';
import { createUrlPolicy, isPublicAddress } from '@minara/agent';

/** Inner (non-public) targets, each in the IPv6 forms that embed an IPv4 address. */
const INNER = [
  ['IPv4-compatible loopback', '::127.0.0.1'],
  ['IPv4-compatible loopback (hex)', '::7f00:1'],
  ['IPv4-compatible private', '::10.0.0.1'],
  ['IPv4-compatible metadata', '::169.254.169.254'],
  ['IPv4-compatible public (deprecated form: never public)', '::8.8.8.8'],
  ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
  ['IPv4-mapped private', '::ffff:192.168.1.1'],
  ['IPv4-translated (RFC 6145) private', '::ffff:0:10.0.0.1'],
  ['NAT64 to loopback', '64:ff9b::127.0.0.1'],
  ['NAT64 to private', '64:ff9b::10.1.2.3'],
  ['NAT64 to metadata', '64:ff9b::a9fe:a9fe'],
  ['local-use NAT64 (RFC 8215)', '64:ff9b:1::10.1.2.3'],
  ['6to4 embedding loopback', '2002:7f00:1::1'],
  ['6to4 embedding private', '2002:c0a8:101::'],
  ['6to4 embedding metadata', '2002:a9fe:a9fe:1::5'],
  ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['unspecified', '::'],
  ['loopback', '::1'],
] as const;

/** Forms that embed a public IPv4 address stay public (a DNS64 network answers with NAT64 addresses). */
const PUBLIC = [
  ['NAT64 to a public address', '64:ff9b::8.8.8.8'],
  ['6to4 embedding a public address', '2002:808:808::1'],
  ['IPv4-mapped public', '::ffff:8.8.8.8'],
  ['global unicast', '2606:4700:4700::1111'],
  ['IPv4 public', '1.1.1.1'],
] as const;

describe('isPublicAddress: IPv6 forms that embed an IPv4 address', () => {
  it.each(INNER)('%s (%s) is not public', (_label, address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
  it.each(PUBLIC)('%s (%s) is public', (_label, address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('createUrlPolicy refuses them', () => {
  const policy = createUrlPolicy('test', { resolve: async (host) => (host === 'rebind.example' ? ['64:ff9b::10.0.0.1'] : host === 'compat.example' ? ['::127.0.0.1'] : ['93.184.215.14']) });

  it.each(INNER)('a URL with the literal %s (%s)', async (_label, address) => {
    await expect(policy.check(new URL(`http://[${address}]:8080/admin`))).rejects.toMatchObject({ code: 'TOOL_BLOCKED' });
  });

  it('`[::127.0.0.1]` as a person types it, and hosts whose DNS answers with such forms', async () => {
    await expect(policy.check(new URL('http://[::127.0.0.1]/'))).rejects.toThrow(/non-public address/);
    await expect(policy.check(new URL('http://compat.example/'))).rejects.toThrow(/non-public address \(::127\.0\.0\.1\)/);
    await expect(policy.check(new URL('http://rebind.example/'))).rejects.toThrow(/non-public address/);
    await expect(policy.check(new URL('http://public.example/'))).resolves.toBeUndefined();
    await expect(policy.check(new URL('http://[64:ff9b::8.8.8.8]/'))).resolves.toBeUndefined();
  });
});
