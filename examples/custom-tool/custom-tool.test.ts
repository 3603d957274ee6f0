import { describe, expect, it } from 'vitest';
import { main, payments } from './index';

describe('examples/custom-tool', () => {
  it('previews, asks for approval, pays once, and runs in an agent turn', async () => {
    const { preview, approvalRequest, paid, turn, audit } = await main({ log: () => {} });
    expect(preview).toMatchObject({ ok: true, data: { preview: true, payee: 'ACME', amountUsd: 120 } });
    expect(approvalRequest.decision).toBe('approval_required');
    expect(approvalRequest.envelope).toMatchObject({ ok: false, code: 'APPROVAL_REQUIRED' });
    expect(paid).toMatchObject({ ok: true, data: { paid: true, reference: 'inv-1' } });
    expect(payments).toEqual([{ to: 'ACME', amountUsd: 120 }]);
    expect(turn.text).toBe('GBP/USD is 1.27.');
    expect(audit.map((a) => a.toolName)).toContain('pay_invoice');
  });
});
