import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, createApp, type MinaraApp, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

const dirs: string[] = [];
const apps: MinaraApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const open = async (env: Record<string, string>, extra: Parameters<typeof createApp>[0] = {}) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-learning-app-'));
  dirs.push(dir);
  const app = await createApp({ storage: createInMemoryStorage(), model: createScriptedModel([]), envFileDir: false, env: { MINARA_DATA_DIR: dir, ...env }, workspace: false, mcp: false, web: false, logger: silentLogger, ...extra });
  apps.push(app);
  return app;
};
const jobIds = (app: MinaraApp) => app.background.status().map((j) => j.id).filter((id) => id.startsWith('learning:')).sort();

describe('createApp and the learning loop', () => {
  it('registers memory_learn and memory_compiled_page per tenant, and a learning store per user and agent', async () => {
    const app = await open({});
    expect(app.tools.has('memory_learn') && app.tools.has('memory_compiled_page')).toBe(true);
    expect(app.learningFor('alice')).toBe(app.learningFor('alice'));
    expect(app.learningFor('alice', 'bot')).not.toBe(app.learningFor('alice'));
    expect(app.learning).toBe(app.learningFor('default'));
  });

  it('schedules: personalization daily when a model is configured (MINARA_PERSONALIZATION_REBUILD=disabled turns it off), reflection only when enabled, the paper mirror only when asked', async () => {
    expect(jobIds(await open({}))).toEqual(['learning:personalization', 'learning:synthesis']);
    expect(jobIds(await open({ MINARA_PERSONALIZATION_REBUILD: 'disabled', MINARA_METHODOLOGY_SYNTHESIS: 'disabled' }))).toEqual([]);
    expect((await open({ MINARA_METHODOLOGY_SYNTHESIS_EVERY: '12h' })).background.status().find((j) => j.id === 'learning:synthesis')?.schedule).toBe('every 12h');
    await expect(open({ MINARA_METHODOLOGY_SYNTHESIS: 'maybe' })).rejects.toThrow(/MINARA_METHODOLOGY_SYNTHESIS: expected enabled or disabled/);
    const all = await open({ MINARA_ROLE_REFLECTION: 'enabled', MINARA_HISTORY_SYNC_EVERY: '15m', MINARA_PERSONALIZATION_REBUILD_EVERY: '12h' });
    expect(all.background.status().filter((j) => j.id.startsWith('learning:')).map((j) => [j.id, j.schedule]).sort()).toEqual([
      ['learning:history-sync', 'every 15m'], ['learning:personalization', 'every 12h'], ['learning:reflection', 'every 6h'], ['learning:synthesis', 'every 1d'],
    ]);
    await expect(open({ MINARA_PERSONALIZATION_REBUILD: 'sometimes' })).rejects.toThrow(ConfigError);
    await expect(open({ MINARA_HISTORY_SYNC_EVERY: 'often' })).rejects.toThrow(/MINARA_HISTORY_SYNC_EVERY: expected a duration/);
  });

  it('learning: false turns it all off: no store, no tools, no jobs, no learned block', async () => {
    const app = await open({}, { learning: false });
    expect(app.learning).toBeUndefined();
    expect(app.learningFor('x')).toBeUndefined();
    expect(app.tools.has('memory_learn')).toBe(false);
    expect(jobIds(app)).toEqual([]);
  });
});
