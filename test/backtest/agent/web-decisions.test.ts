/**
 * `GET /v1/backtests/runs` and `GET /v1/backtests/runs/:run/decisions`: an agent run's decisions, read from its run
 * folder, for the Backtests page. The attacks come first (a tenant reading another's run by path traversal, through a
 * symlink, as a user id that is a path, with huge pages or files), then what the page shows.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCassetteModel, runAgentBacktest, writeBacktestReport } from '@minara/agent/backtest';
import { createScriptedModel } from '@minara/agent/testing';
import { createGateway, type Gateway, gatewayEnv } from '@minara/agent/gateway';
import { createApp, type MinaraApp, silentLogger } from '@minara/agent';
import { agentBars } from './run-fixture';

const FIXTURE = path.join(import.meta.dirname, '..', '..', 'fixtures', 'backtest', 'agent-sma.cassette.json');
const SECRET = 'BOB-SECRET-7f3a';
let root: string;
let runs: string;
let app: MinaraApp;

/** A gateway whose bearer token names the tenant (`Bearer alice` is alice; `Bearer op` is an operator). */
function gateway(options: { maxFileBytes?: number } = {}): Gateway {
  return createGateway({
    runtime: app.runtime,
    storage: app.storage,
    tools: app.tools,
    logger: silentLogger,
    authenticate: (request) => {
      const who = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
      return who ? { userId: who === 'op' ? 'operator-1' : who, roles: who === 'op' ? ['operator'] : [] } : null;
    },
    backtestRuns: { dir: runs, ...(options.maxFileBytes ? { maxFileBytes: options.maxFileBytes } : {}) },
  });
}

const get = async (g: Gateway, who: string, p: string) => {
  const res = await g.fetch(new Request(`http://127.0.0.1${p}`, { headers: { authorization: `Bearer ${who}` } }));
  return { status: res.status, text: await res.text() };
};

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'bt-web-'));
  runs = path.join(root, 'runs');
  app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, surface: 'gateway', config: { dataDir: path.join(root, 'data') }, model: createScriptedModel([]) });
  // A real agent run from the committed cassette (no model, no network), written as the CLI writes it.
  const model = createCassetteModel({ cassette: FIXTURE, mode: 'replay' });
  const run = await runAgentBacktest({ bars: agentBars(), agent: { prompt: 'Review BTC and decide.', schedule: { kind: 'every-n-bars', n: 10 }, limits: { maxTradeUsd: 5000 }, model }, temperature: 0 });
  await writeBacktestReport(run.result, path.join(runs, 'alice', 'agent-1'), { png: false });
  // Bob's run: the same folder with a secret in what his agent said.
  cpSync(path.join(runs, 'alice', 'agent-1'), path.join(runs, 'bob', 'agent-1'), { recursive: true });
  const bobLog = path.join(runs, 'bob', 'agent-1', 'decisions.jsonl');
  writeFileSync(bobLog, readFileSync(bobLog, 'utf8').replaceAll('Bought BTC.', SECRET));
  // A run folder at the top of the directory (nobody's tenant) also holds the secret.
  cpSync(path.join(runs, 'bob', 'agent-1'), path.join(runs, 'agent-top'), { recursive: true });
}, 120_000);

afterAll(async () => {
  await app?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('agent run decisions over HTTP: attacks first', () => {
  it('a tenant reads their own run, and no path-traversal id reaches another tenant\'s run or the directory above', async () => {
    const g = gateway();
    expect(JSON.parse((await get(g, 'alice', '/v1/info')).text).features.backtestRuns).toBe(true);
    const own = await get(g, 'alice', '/v1/backtests/runs/agent-1/decisions');
    expect(own.status).toBe(200);
    expect(own.text).toContain('Bought BTC.');
    for (const id of ['..%2Fbob%2Fagent-1', '%2E%2E%2Fbob%2Fagent-1', '..', '.', '..%2F..%2Fruns%2Fbob%2Fagent-1', '%2Ftmp', 'agent-1%2F..%2F..%2Fbob%2Fagent-1', '..%5Cbob%5Cagent-1', 'agent-1%00']) {
      const r = await get(g, 'alice', `/v1/backtests/runs/${id}/decisions`);
      expect(r.status, id).toBeGreaterThanOrEqual(400);
      expect(r.status, id).toBeLessThan(500);
      expect(r.text, id).not.toContain(SECRET);
    }
    // A literal `..` segment is normalised by the URL parser before routing; it must not escape either.
    const dots = await get(g, 'alice', '/v1/backtests/runs/../../bob/agent-1/decisions');
    expect(dots.text).not.toContain(SECRET);
  });

  it('a symlink in the tenant\'s folder to another tenant\'s run (or its decision log) is refused', async () => {
    symlinkSync(path.join(runs, 'bob', 'agent-1'), path.join(runs, 'alice', 'linked'));
    mkdirSync(path.join(runs, 'alice', 'agent-2'));
    cpSync(path.join(runs, 'alice', 'agent-1', 'run_config.json'), path.join(runs, 'alice', 'agent-2', 'run_config.json'));
    symlinkSync(path.join(runs, 'bob', 'agent-1', 'decisions.jsonl'), path.join(runs, 'alice', 'agent-2', 'decisions.jsonl'));
    try {
      const g = gateway();
      for (const id of ['linked', 'agent-2']) {
        const r = await get(g, 'alice', `/v1/backtests/runs/${id}/decisions`);
        expect(r.status, id).toBe(404);
        expect(r.text, id).not.toContain(SECRET);
      }
      const list = await get(g, 'alice', '/v1/backtests/runs');
      expect(list.status).toBe(200);
      expect((JSON.parse(list.text) as { runs: Array<{ id: string }> }).runs.map((r) => r.id)).toEqual(['agent-1']);
    } finally {
      rmSync(path.join(runs, 'alice', 'linked'));
      rmSync(path.join(runs, 'alice', 'agent-2'), { recursive: true });
    }
  });

  it('a user id that is a path (`..`, `.`) has no runs: it never names the directory above or the runs root', async () => {
    const g = gateway();
    for (const who of ['..', '.']) {
      const list = await get(g, who, '/v1/backtests/runs');
      expect(list.text, who).not.toContain('agent-top');
      expect(list.text, who).not.toContain('alice');
      for (const p of ['/v1/backtests/runs/agent-top/decisions', '/v1/backtests/runs/runs/decisions', '/v1/backtests/runs/bob/decisions']) {
        const r = await get(g, who, p);
        expect(r.status, `${who} ${p}`).toBe(404);
        expect(r.text).not.toContain(SECRET);
      }
    }
  });

  it('another tenant, an operator included, sees only their own folder; unauthenticated callers get 401', async () => {
    const g = gateway();
    expect((await get(g, 'carol', '/v1/backtests/runs/agent-1/decisions')).status).toBe(404);
    expect(JSON.parse((await get(g, 'carol', '/v1/backtests/runs')).text)).toEqual({ runs: [] });
    expect((await get(g, 'op', '/v1/backtests/runs/agent-1/decisions')).status).toBe(404);
    expect((await g.fetch(new Request('http://127.0.0.1/v1/backtests/runs/agent-1/decisions'))).status).toBe(401);
    expect((await g.fetch(new Request('http://127.0.0.1/v1/backtests/runs'))).status).toBe(401);
  });

  it('paging is bounded (limit 1–50, offset ≥ 0) and a decision log over the size limit is refused, not read', async () => {
    const g = gateway();
    for (const q of ['limit=0', 'limit=51', 'limit=abc', 'offset=-1', 'offset=1e9', 'limit=1.5']) {
      const r = await get(g, 'alice', `/v1/backtests/runs/agent-1/decisions?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.text, q).toMatch(/"message":"(limit|offset): expected/);
    }
    const small = gateway({ maxFileBytes: 1000 });
    const big = await get(small, 'alice', '/v1/backtests/runs/agent-1/decisions');
    expect(big.status).toBe(413);
    expect(big.text).toMatch(/decisions\.jsonl is larger than 1000 bytes/);
  });

  it('a bad backtestRuns option fails createGateway naming the field; minara serve reads GATEWAY_BACKTEST_RUNS_DIR', () => {
    const base = { runtime: app.runtime, storage: app.storage, tools: app.tools, logger: silentLogger };
    expect(() => createGateway({ ...base, backtestRuns: { dir: '' } })).toThrow(/backtestRuns\.dir/);
    expect(() => createGateway({ ...base, backtestRuns: { dir: runs, maxFileBytes: 0 } })).toThrow(/backtestRuns\.maxFileBytes/);
    expect(gatewayEnv({ GATEWAY_BACKTEST_RUNS_DIR: ' /srv/runs ' }).backtestRunsDir).toBe('/srv/runs');
    expect(gatewayEnv({}).backtestRunsDir).toBeUndefined();
  });

  it('minara serve serves the run folders named by GATEWAY_BACKTEST_RUNS_DIR', async () => {
    const { createAppGateway } = await import('../../../cli/serve');
    const before = process.env.GATEWAY_BACKTEST_RUNS_DIR;
    process.env.GATEWAY_BACKTEST_RUNS_DIR = runs;
    try {
      const { gateway: g } = await createAppGateway(app);
      const res = await g.fetch(new Request('http://127.0.0.1/v1/backtests/runs'));
      expect(res.status).toBe(200);
      // The single local user is `default`: no folder of theirs here, so an empty list (not a 404).
      expect(await res.json()).toEqual({ runs: [] });
    } finally {
      if (before === undefined) delete process.env.GATEWAY_BACKTEST_RUNS_DIR;
      else process.env.GATEWAY_BACKTEST_RUNS_DIR = before;
    }
  });

  it('without backtestRuns the routes answer 404 with the reason', async () => {
    const g = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, logger: silentLogger });
    const r = await g.fetch(new Request('http://127.0.0.1/v1/backtests/runs'));
    expect(r.status).toBe(404);
    expect(await r.text()).toMatch(/backtestRuns/);
  });
});

describe('agent run decisions over HTTP: what the Backtests page shows', () => {
  it('lists the tenant\'s agent runs with their window and model', async () => {
    const body = JSON.parse((await get(gateway(), 'alice', '/v1/backtests/runs')).text) as { runs: Array<Record<string, unknown>> };
    expect(body.runs).toHaveLength(1);
    expect(body.runs[0]).toMatchObject({ id: 'agent-1', strategy: 'agent', symbols: ['BTC'], model: 'cassette:claude-sonnet-4-5', decisions: 4 });
    expect(String(body.runs[0]!.start)).toMatch(/^2021-03-01/);
  });

  it('pages through the decisions: the message and tool results the model saw, what it said and did, the gate, the engine\'s fills', async () => {
    const g = gateway();
    const page1 = JSON.parse((await get(g, 'alice', '/v1/backtests/runs/agent-1/decisions?limit=2')).text) as DecisionsPage;
    expect(page1).toMatchObject({ total: 4, offset: 0, limit: 2, next: 2 });
    expect(page1.run).toMatchObject({ id: 'agent-1', model: 'cassette:claude-sonnet-4-5', contamination: { trainingCutoff: '2025-07-01', overlap: true } });
    expect(page1.run.disabledTools.length).toBeGreaterThan(0);
    const [d1, d2] = page1.decisions;
    expect(d1).toMatchObject({ decision: 1, said: 'Bought BTC.' });
    expect(d1!.message).toMatch(/^\[Backtest decision 1\] Today is 2021-03-02/);
    // The tool results the model saw, named by the tool that answered (the scripted model calls through tool_invoke).
    expect(d1!.saw.map((x) => x.tool)).toEqual(['get_ohlcv', 'get_portfolio', 'buy_token']);
    expect(JSON.stringify(d1!.saw[0])).toContain('candles');
    expect(JSON.stringify(d1!.did)).toContain('buy_token');
    expect(d1!.gate).toEqual([expect.objectContaining({ tool: 'buy_token', decision: 'approved', rule: 'approval' })]);
    expect(d1!.intents).toEqual([expect.objectContaining({ symbol: 'BTC', side: 'buy', notionalUsd: 2000 })]);
    // The fill the engine made for this decision's order: the next bar's open, with its fee.
    const bars = agentBars();
    expect(d1!.fills).toHaveLength(1);
    expect(d1!.fills[0]).toMatchObject({ side: 'buy', symbol: 'BTC', status: 'filled' });
    expect(d1!.fills[0]!.price).toBeCloseTo(bars.open[0]![1]!, 9);
    expect(d1!.fills[0]!.time).toBe(new Date(bars.times[1]!).toISOString());
    expect(d1!.fills[0]!.feeUsd).toBeGreaterThan(0);
    expect(d2).toMatchObject({ decision: 2, said: 'Holding.', fills: [] });
    // The context the model saw before the message: the system prompt it was given, once per distinct text.
    expect(d1!.context).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const prompt = page1.prompts[d1!.context!.sha256]!;
    expect(prompt.length).toBe(d1!.context!.chars);
    expect(createHash('sha256').update(prompt).digest('hex')).toBe(d1!.context!.sha256);
    const page2 = JSON.parse((await get(g, 'alice', '/v1/backtests/runs/agent-1/decisions?offset=2&limit=2')).text) as DecisionsPage;
    expect(page2.decisions.map((d) => d.said)).toEqual(['Sold.', 'Flat.']);
    expect(page2.next).toBeNull();
    expect(page2.decisions[0]!.fills[0]).toMatchObject({ side: 'sell', status: 'filled' });
  });

  it('a large tool result is cut to a preview, so one decision cannot make a page huge', async () => {
    mkdirSync(path.join(runs, 'alice', 'agent-big'), { recursive: true });
    cpSync(path.join(runs, 'alice', 'agent-1', 'run_config.json'), path.join(runs, 'alice', 'agent-big', 'run_config.json'));
    const huge = { decision: 1, index: 0, time: '2021-03-02T00:00:00.000Z', message: 'm', saw: [{ tool: 'get_ohlcv', ok: true, output: { candles: 'x'.repeat(200_000) } }], said: 's', did: [], gate: [], intents: [], stopReason: 'finished', costUsd: 0 };
    writeFileSync(path.join(runs, 'alice', 'agent-big', 'decisions.jsonl'), `${JSON.stringify(huge)}\n`);
    try {
      const r = await get(gateway(), 'alice', '/v1/backtests/runs/agent-big/decisions');
      expect(r.status).toBe(200);
      expect(r.text.length).toBeLessThan(40_000);
      const body = JSON.parse(r.text) as DecisionsPage;
      expect(body.decisions[0]!.saw[0]!.output).toMatchObject({ truncated: true });
    } finally {
      rmSync(path.join(runs, 'alice', 'agent-big'), { recursive: true });
    }
  });

  it('works with the scripted model too (a run folder made on the fly)', async () => {
    const model = createScriptedModel([{ text: 'Nothing to do.' }]);
    const run = await runAgentBacktest({ bars: agentBars(), agent: { prompt: 'Look.', schedule: { kind: 'every-n-bars', n: 40 }, model }, temperature: 0 });
    await writeBacktestReport(run.result, path.join(runs, 'dave', 'quiet'), { png: false });
    const body = JSON.parse((await get(gateway(), 'dave', '/v1/backtests/runs/quiet/decisions')).text) as DecisionsPage;
    expect(body.decisions.map((d) => d.said)).toEqual(['Nothing to do.']);
  }, 60_000);
});

interface DecisionsPage {
  run: { id: string; model: string; contamination: Record<string, unknown>; disabledTools: unknown[] };
  total: number;
  offset: number;
  limit: number;
  next: number | null;
  decisions: Array<{
    decision: number;
    message: string;
    said: string;
    saw: Array<{ tool: string; output: unknown }>;
    did: Array<{ tool: string }>;
    gate: unknown[];
    intents: unknown[];
    fills: Array<{ side: string; symbol: string; status: string; price: number; time: string; feeUsd: number }>;
    context: { sha256: string; chars: number } | null;
  }>;
  prompts: Record<string, string>;
}
