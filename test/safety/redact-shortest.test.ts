import { findSecrets, redactSecrets, SECRET_PATTERNS } from '@minara/agent';
import { describe, expect, it } from 'vitest';

// The shortest text each default pattern matches (redactSecrets skips the scan below the shortest of them).
const SHORTEST: Record<string, string> = {
  anthropic_key: `sk-ant-${'a'.repeat(20)}`,
  openai_key: `sk-${'a'.repeat(20)}`,
  stripe_key: `sk_live_${'a'.repeat(10)}`,
  minara_key: `mk_live_${'a'.repeat(16)}`,
  jwt: `eyJ${'a'.repeat(8)}.eyJ${'a'.repeat(8)}.${'a'.repeat(8)}`,
  github_pat: `ghp_${'a'.repeat(20)}`,
  google_api_key: `AIza${'a'.repeat(35)}`,
  slack_token: `xoxb-${'a'.repeat(10)}`,
  aws_access_key: `AKIA${'A'.repeat(16)}`,
  evm_address: `0x${'a'.repeat(40)}`,
  btc_bech32: `bc1${'q'.repeat(11)}`,
  btc_legacy: `1${'a'.repeat(25)}`,
  pem_private: '-----BEGIN PRIVATE KEY-----',
};

describe('redactSecrets skips only strings shorter than any default pattern can match', () => {
  it('the shortest match of every default pattern is still found and redacted', () => {
    for (const p of SECRET_PATTERNS) {
      const text = SHORTEST[p.name];
      if (text === undefined) continue; // checksum-validated keys (WIF, xprv) are longer than 50 characters
      expect(findSecrets(text).map((m) => m.pattern), p.name).toContain(p.name);
      expect(redactSecrets(text, { includeIdentifiers: true }), p.name).toContain('[REDACTED:');
      expect(text.length, p.name).toBeGreaterThanOrEqual(14);
    }
  });

  it('short values pass unchanged', () => {
    expect(redactSecrets('BTC')).toBe('BTC');
    expect(redactSecrets('sk-ant-abc')).toBe('sk-ant-abc');
  });
});
