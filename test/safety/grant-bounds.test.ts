/**
 * Grants without bounds (issue 37, part 2), through the SDK of a whole app: the finance limits the operator set
 * bound a grant's caps, MINARA_GRANT_MAX_DAYS its lifetime, and no grant names a MANUAL_ONLY tool.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, createToolRegistry, DEFAULT_GRANT_MAX_LIFETIME_MS, type MinaraApp, silentLogger } from '@minara/agent';

const dirs: string[] = [];
const apps: MinaraApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function app(env: Record<string, string> = {}): Promise<MinaraApp> {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-grant-bounds-'));
  dirs.push(dir);
  const a = await createApp({ envFileDir: false, env, logger: silentLogger, config: { dataDir: dir }, finance: { limits: { maxTradeUsd: 1_000, maxTotalExposureUsd: 4_000 } } });
  apps.push(a);
  return a;
}

describe('grant bounds in an app', () => {
  it('refuses a MANUAL_ONLY tool (named or through its set), caps above the finance limits, and a lifetime above the maximum', async () => {
    const a = await app({ MINARA_GRANT_MAX_DAYS: '30' });
    const g = a.tools.grants;
    const base = { userId: 'bob', sources: ['cron'] as const, capPerCallUsd: 100, capPerDayUsd: 500, expiresAt: 86_400_000 };
    await expect(g.create({ ...base, tools: ['withdraw_funds'] })).rejects.toThrow(/"tools" names "withdraw_funds", a MANUAL_ONLY tool/);
    await expect(g.create({ ...base, tools: ['transfer_token'] })).rejects.toThrow(/"tools" names "transfer_token", a MANUAL_ONLY tool/);
    await expect(g.create({ ...base, toolSets: ['transfer'] })).rejects.toThrow(/"toolSets" covers "transfer_token", "withdraw_funds", a MANUAL_ONLY tool/);
    await expect(g.create({ ...base, tools: ['buy_token'], capPerCallUsd: 1e12 })).rejects.toThrow(/"capPerCallUsd" \(\$1,000,000,000,000\) is above the operator's limit of \$1,000 per call/);
    await expect(g.create({ ...base, tools: ['buy_token'], capPerDayUsd: 1e12 })).rejects.toThrow(/"capPerDayUsd" .* above the operator's limit of \$4,000 per day/);
    await expect(g.create({ ...base, tools: ['buy_token'], expiresAt: '9999-12-31T00:00:00Z' })).rejects.toThrow(/"expiresAt" .* outlives the longest a grant may live \(30 days/);
    expect(await g.list({ includeRevoked: true })).toEqual([]);
    // A trade set is fine; left-out caps and expiry take the bounds.
    const ok = await g.create({ userId: 'bob', toolSets: ['trade'], sources: ['cron'] });
    expect(ok).toMatchObject({ capPerCallUsd: 1_000, capPerDayUsd: 4_000 });
    expect(Date.parse(ok.expiresAt!) - Date.parse(ok.createdAt)).toBe(30 * 86_400_000);
  });

  it('a bad MINARA_GRANT_MAX_DAYS is a ConfigError naming it; bad registry bounds are CONFIG_INVALID naming the field', async () => {
    await expect(app({ MINARA_GRANT_MAX_DAYS: 'forever' })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('MINARA_GRANT_MAX_DAYS') });
    expect(() => createToolRegistry({ grantBounds: { maxCapPerDayUsd: -1 } })).toThrow(/"grantBounds"\.maxCapPerDayUsd: expected a finite number > 0/);
    expect(DEFAULT_GRANT_MAX_LIFETIME_MS).toBe(90 * 86_400_000);
  });
});
