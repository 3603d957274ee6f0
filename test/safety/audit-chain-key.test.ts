/** The registry keys the audit links with the chain key alone (src/safety/audit-keys.ts), the same key deriveAuditKeys gives. */
import { deriveAuditKeys } from '@minara/agent';
import { describe, expect, it } from 'vitest';
import { deriveAuditChainKey } from '../../src/safety/audit-keys';

describe('deriveAuditChainKey', () => {
  it('gives the chain key of deriveAuditKeys, and refuses a short secret the same way', () => {
    const secret = new Uint8Array(32).fill(7);
    expect(deriveAuditChainKey(secret)).toEqual(deriveAuditKeys(secret).chainKey);
    expect(deriveAuditChainKey(new Uint8Array(32).fill(8))).not.toEqual(deriveAuditChainKey(secret));
    expect(() => deriveAuditChainKey(new Uint8Array(16))).toThrow(/deriveAuditChainKey: secret must be a Uint8Array of at least 32 bytes/);
    expect(() => deriveAuditKeys(new Uint8Array(16))).toThrow(/deriveAuditKeys: secret must be a Uint8Array of at least 32 bytes/);
  });
});
