/**
 * skill-system (signals): activating a sandbox-class skill from an autonomous source is refused unless the turn is
 * operator-authored. The built-in code-sandbox skill (`code-analysis`) is sandbox-class, so the rule holds for it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type MinaraApp, silentLogger } from '@minara/agent';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';

const apps: MinaraApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function open(model: ReturnType<typeof createScriptedModel>) {
  const app = await createApp({ model, logger: silentLogger, envFileDir: false, env: { MINARA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'minara-sandbox-skill-')), MINARA_EXTRACTION: 'disabled' } });
  apps.push(app);
  return app;
}

const activate = { toolCalls: [{ toolName: 'activate_skills', input: { ids: ['code-analysis'] } }] };

describe('the code-sandbox skill from an autonomous source', () => {
  it('code-analysis is sandbox-class', async () => {
    const app = await open(createScriptedModel([]));
    expect(app.skills.get('code-analysis')?.sandbox).toBe(true);
  });

  it('a webhook turn\'s activate_skills is blocked with the reason; a person\'s turn activates it', async () => {
    const model = createScriptedModel([activate, { text: 'done' }, activate, { text: 'done' }]);
    const app = await open(model);
    const refused = await recordEvents(app.runtime.run({ sessionId: 'auto-webhook', message: 'compute the RSI of BTC', source: 'webhook' }));
    const blocked = refused.ofType('tool-blocked').find((e) => e.toolName === 'activate_skills');
    expect(blocked?.reason).toMatch(/Skill "code-analysis" starts a sandbox and may not be activated from an autonomous source \(webhook\)/);
    expect(refused.ofType('skill-activated').flatMap((e) => e.skillIds)).not.toContain('code-analysis');
    const allowed = await recordEvents(app.runtime.run({ sessionId: 'person', message: 'compute the RSI of BTC' }));
    expect(allowed.ofType('skill-activated').flatMap((e) => e.skillIds)).toContain('code-analysis');
    model.assertConsumed();
  });

  it.each(['cron', 'webhook'] as const)('a %s signal cannot preload it; the same preload in an operator-authored turn loads it', async (source) => {
    const model = createScriptedModel([{ text: 'done' }, { text: 'done' }]);
    const app = await open(model);
    const signal = { source, signal_id: 'sig-1', preload_skills: ['code-analysis'] };
    const refused = await recordEvents(app.runtime.run({ sessionId: 'hook', message: 'BTC crossed 100k', source, signal }));
    expect(refused.ofType('skill-activated').flatMap((e) => e.skillIds)).not.toContain('code-analysis');
    const operator = await recordEvents(app.runtime.run({ sessionId: 'hook-op', message: 'BTC crossed 100k', source, operatorAuthored: true, signal: { ...signal, signal_id: 'sig-2' } }));
    expect(operator.ofType('skill-activated').flatMap((e) => e.skillIds)).toContain('code-analysis');
    model.assertConsumed();
  });
});
