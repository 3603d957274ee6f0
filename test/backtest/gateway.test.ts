import { describe, expect, it } from 'vitest';
import { createApp, silentLogger } from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { createScriptedModel } from '@minara/agent/testing';
import { BACKTEST_REPORT_TITLE_PREFIX } from '@minara/agent/backtest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BACKTEST_TITLE_PREFIX } from '../../src/gateway/backtest-routes';

describe('GET /v1/backtests', () => {
  it("lists the caller's backtest runs made by run_backtest (scoped by user like the artifacts), with the chart id", async () => {
    expect(BACKTEST_TITLE_PREFIX).toBe(BACKTEST_REPORT_TITLE_PREFIX);
    const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, surface: 'gateway', config: { dataDir: mkdtempSync(path.join(tmpdir(), 'bt-gw-')) }, artifacts: { png: false }, model: createScriptedModel([]) });
    try {
      const { createToolCallContext } = await import('@minara/agent');
      const r = await app.tools.dispatch('run_backtest', { strategy: 'momentum', bars: 300 }, { context: createToolCallContext({ sessionId: 's', userId: 'default' }) });
      expect(JSON.stringify(r)).toMatch(/report:\/\/r-/);
      const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, memoryFor: app.memoryFor, logger: silentLogger, ...(app.artifacts ? { artifacts: app.artifacts, files: app.files } : {}) });
      const res = await gateway.fetch(new Request('http://127.0.0.1/v1/backtests'));
      expect(res.status).toBe(200);
      const body = (await res.json()) as { runs: { title: string; markdown: string; chartId?: string }[] };
      expect(body.runs).toHaveLength(1);
      expect(body.runs[0]?.title).toMatch(/^momentum on SYN/);
      expect(body.runs[0]?.markdown).toMatch(/\| Sharpe \|/);
      expect(body.runs[0]?.chartId).toMatch(/^x-/);
      expect((await gateway.fetch(new Request('http://127.0.0.1/v1/backtests?limit=0'))).status).toBe(400);
    } finally {
      await app.close();
    }
  });
});
