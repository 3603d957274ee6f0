/**
 * Issue 32, part 6: configuration behaves one way. A feature the environment turns on without what it needs
 * starts disabled with one warning naming what is missing (the app still starts), `app.disabledFeatures` and
 * the doctor list it; the soft-delete retention is settable through createApp and the environment.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, createApp, type CreateAppOptions, formatDoctorReport, type Logger, runDoctor } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug: () => undefined, info: () => undefined, error: () => undefined, warn: (m) => void warnings.push(m) };
}
const dataDir = () => mkdtempSync(path.join(tmpdir(), 'minara-gates-'));
const open = (options: CreateAppOptions) => createApp({ envFileDir: false, finance: false, ...options, config: { dataDir: dataDir(), ...options.config } });

const EVERYTHING_ON = {
  WORKSPACE_DREAM_ENABLED: '1',
  MEMORY_CONSOLIDATION_ENABLED: 'true',
  MINARA_ROLE_REFLECTION: 'enabled',
  MINARA_PERSONALIZATION_REBUILD: 'enabled',
  MINARA_HEARTBEAT_EVERY: '30m',
  EMBEDDING_PROVIDER: 'openai',
  MINARA_TRADING: 'live',
  MINARA_DELIVERY_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
};

describe('a feature turned on without what it needs', () => {
  it('starts disabled with exactly one warning naming what is missing, and the app starts', async () => {
    const logger = recordingLogger();
    const app = await open({ env: EVERYTHING_ON, logger });
    try {
      const byFeature = new Map(app.disabledFeatures.map((d) => [d.feature, d]));
      expect([...byFeature.keys()].sort()).toEqual(
        ['delivery-webhook', 'dreaming', 'embeddings', 'heartbeat', 'live-trading', 'memory-consolidation', 'personalization-rebuild', 'role-reflection'].sort(),
      );
      expect(byFeature.get('dreaming')?.missing).toMatch(/a model \(MINARA_MODEL/);
      expect(byFeature.get('embeddings')?.missing).toMatch(/EMBEDDING_API_KEY/);
      expect(byFeature.get('live-trading')?.missing).toBe('MINARA_API_KEY');
      expect(byFeature.get('delivery-webhook')?.missing).toMatch(/MINARA_DELIVERY_WEBHOOK_SECRET/);
      // One warning per feature, each naming the setting and what is missing.
      for (const d of app.disabledFeatures) {
        const lines = logger.warnings.filter((w) => w === d.message);
        expect(lines, d.feature).toHaveLength(1);
        expect(d.message).toContain(d.setting);
        expect(d.message).toContain(d.missing);
      }
      // And it is really off.
      expect(app.workspace?.settings.dreaming.enabled).toBe(false);
      expect(app.embedderConfigured).toBe(false);
      expect(app.background.status().map((j) => j.id)).not.toContain('heartbeat');
      expect(app.background.status().map((j) => j.id).filter((id) => id.startsWith('learning:'))).toEqual([]);
      // The doctor lists them.
      const report = await runDoctor({ storage: app.storage, memory: app.memory, modelStatus: app.modelStatus, disabledFeatures: app.disabledFeatures });
      expect(report.disabledFeatures.map((d) => d.feature).sort()).toEqual([...byFeature.keys()].sort());
      const text = formatDoctorReport(report);
      expect(text).toContain('Disabled (turned on, but missing what they need)');
      expect(text).toMatch(/dreaming\s+WORKSPACE_DREAM_ENABLED=1: needs a model/);
    } finally {
      await app.close();
    }
  });

  it('with what it needs, it is on and nothing is reported', async () => {
    const logger = recordingLogger();
    const app = await open({
      env: { WORKSPACE_DREAM_ENABLED: '1', MEMORY_CONSOLIDATION_ENABLED: '1', MINARA_DELIVERY_WEBHOOK_URL: 'http://127.0.0.1:9/hook', MINARA_DELIVERY_WEBHOOK_SECRET: 'a-long-enough-secret' },
      model: createScriptedModel([]),
      logger,
    });
    try {
      expect(app.disabledFeatures).toEqual([]);
      expect(app.workspace?.settings.dreaming.enabled).toBe(true);
      expect(logger.warnings.filter((w) => / is set but /.test(w))).toEqual([]);
      const report = await runDoctor({ storage: app.storage, memory: app.memory, modelStatus: app.modelStatus, disabledFeatures: app.disabledFeatures });
      expect(report.disabledFeatures).toEqual([]);
      expect(formatDoctorReport(report)).not.toContain('Disabled (turned on');
    } finally {
      await app.close();
    }
  });
});

describe('the soft-delete retention', () => {
  const DAY = 86_400_000;
  const purgedAfter = async (options: CreateAppOptions, ageDays: number) => {
    let t = Date.parse('2026-03-01T00:00:00.000Z');
    const app = await open({ ...options, now: () => new Date(t), logger: recordingLogger(), workspace: false });
    try {
      const { id } = await app.memory.write({ category: 'observation', content: 'a memory to forget' });
      await app.memory.softDelete(id);
      t += ageDays * DAY;
      await app.memory.purgeExpiredSoftDeleted();
      return (await app.memory.get(id, { includeDeleted: true })) === undefined;
    } finally {
      await app.close();
    }
  };

  it('is 30 days by default, and settable through createApp and MEMORY_SOFT_DELETE_RETENTION_DAYS (the option wins)', async () => {
    expect(await purgedAfter({}, 29)).toBe(false);
    expect(await purgedAfter({}, 31)).toBe(true);
    expect(await purgedAfter({ softDeleteRetentionDays: 7 }, 8)).toBe(true);
    expect(await purgedAfter({ softDeleteRetentionDays: 7 }, 6)).toBe(false);
    expect(await purgedAfter({ env: { MEMORY_SOFT_DELETE_RETENTION_DAYS: '2' } }, 3)).toBe(true);
    expect(await purgedAfter({ env: { MEMORY_SOFT_DELETE_RETENTION_DAYS: '2' } }, 1)).toBe(false);
    expect(await purgedAfter({ softDeleteRetentionDays: 90, env: { MEMORY_SOFT_DELETE_RETENTION_DAYS: '2' } }, 60)).toBe(false);
  });

  it('refuses a bad value with a ConfigError naming the field', async () => {
    const cases: CreateAppOptions[] = [
      { softDeleteRetentionDays: -1 },
      { softDeleteRetentionDays: Number.NaN },
      { softDeleteRetentionDays: 40_000 },
      { env: { MEMORY_SOFT_DELETE_RETENTION_DAYS: 'thirty' } },
      { env: { MEMORY_SOFT_DELETE_RETENTION_DAYS: '-3' } },
    ];
    for (const options of cases) {
      const error: unknown = await open({ ...options, logger: recordingLogger(), workspace: false }).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).fields).toEqual(['softDeleteRetentionDays']);
      expect((error as Error).message).toMatch(/softDeleteRetentionDays.*days from 0 to 36500/);
    }
  });
});
