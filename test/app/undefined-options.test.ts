/**
 * An option that is `undefined` never overrides a set value (issue 37, part 3 "shadow mode silently live"). The
 * attack: with MINARA_TRADING_MODE=shadow, `createApp({ finance: { provider, market, tradingMode: undefined } })`
 * resolved to `live` and a cron buy reached the live provider. Then the walk: every key of `CreateAppOptions` and of
 * its nested option objects, read from the types with the TypeScript compiler, is set to `undefined` explicitly; the
 * app must resolve exactly as without the key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, createToolCallContext, type CreateAppOptions, definedOnly, type MinaraApp, silentLogger } from '@minara/agent';
import { createPaperTradingProvider, createSimulatedMarket, type TradingProvider } from '@minara/agent/finance';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

const ROOT = path.join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-undefined-opts-'));
  dirs.push(d);
  return d;
};

/** A "live" venue whose executeSpot is recorded: reaching it in shadow mode is the attack. */
function liveVenue() {
  const market = createSimulatedMarket({ seed: 7 });
  const paper = createPaperTradingProvider({ trading: createInMemoryStorage().trading, market });
  const executed: string[] = [];
  const provider: TradingProvider = {
    ...paper,
    name: 'live-venue',
    async executeSpot(order) {
      executed.push(`${order.from}->${order.to}`);
      return paper.executeSpot(order);
    },
  };
  return { market, provider, executed };
}

describe('attack: shadow mode silently live', () => {
  it('MINARA_TRADING_MODE=shadow with finance.tradingMode: undefined resolves to shadow; a cron buy never reaches the live venue', async () => {
    const venue = liveVenue();
    const app = await createApp({
      envFileDir: false, env: { MINARA_TRADING_MODE: 'shadow' }, logger: silentLogger, storage: createInMemoryStorage(), config: { dataDir: temp() },
      finance: { provider: venue.provider, market: venue.market, tradingMode: undefined },
    });
    try {
      expect(app.finance?.tradingMode).toBe('shadow');
      await app.tools.grants.create({ tools: ['buy_token'], userId: 'default', sources: ['cron'], capPerCallUsd: 100, capPerDayUsd: 100 });
      const out = await app.tools.dispatchDetailed('buy_token', { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH', confirm: true }, { context: createToolCallContext({ sessionId: 'cron-1', source: 'cron', userId: 'default' }) });
      expect(out.envelope.ok, JSON.stringify(out.envelope)).toBe(true);
      expect(venue.executed).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('definedOnly drops undefined keys only', () => {
    expect({ mode: 'shadow', seed: 0, ...definedOnly({ mode: undefined, seed: 1, off: false, none: null }) }).toEqual({ mode: 'shadow', seed: 1, off: false, none: null });
    expect(definedOnly(undefined)).toEqual({});
    expect(definedOnly(false)).toEqual({});
  });
});

/** Every option path: the top-level keys of CreateAppOptions and the keys of its nested option objects. */
function optionPaths(): string[][] {
  const file = path.join(ROOT, 'src/app/types.ts');
  const program = ts.createProgram([file], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  let options: ts.Type | undefined;
  ts.forEachChild(source, (node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === 'CreateAppOptions') options = checker.getTypeAtLocation(node);
  });
  if (!options) throw new Error('CreateAppOptions not found');
  // An option object: a plain object type named *Options / *Input, or an anonymous literal (a Partial/Pick of one);
  // not a part the host hands in whole (Storage, Workspace, a model, a logger, an array, a function).
  const isOptionPart = (t: ts.Type): boolean => {
    // An intersection counts only when every member is an object (`Partial<…> & { png? }`), not `string & {}`.
    if (t.isIntersection()) return t.types.every((m) => (m.flags & ts.TypeFlags.Object) !== 0);
    if (!(t.flags & ts.TypeFlags.Object)) return false;
    if (checker.isArrayType(t) || checker.isTupleType(t) || t.getCallSignatures().length > 0) return false;
    const name = (t.aliasSymbol ?? t.getSymbol())?.getName() ?? '';
    return /Options$|Input$|^__type$|^Partial$|^Pick$|^Omit$/.test(name);
  };
  const paths: string[][] = [];
  for (const prop of checker.getPropertiesOfType(options)) {
    paths.push([prop.getName()]);
    const type = checker.getTypeOfSymbol(prop);
    const objects = (type.isUnion() ? type.types : [type]).filter(isOptionPart);
    const nested = new Set(objects.flatMap((t) => checker.getPropertiesOfType(t).map((p) => p.getName())));
    for (const key of nested) paths.push([prop.getName(), key]);
  }
  return paths;
}

/** What an app resolved, in values that can be compared. */
async function snapshot(app: MinaraApp): Promise<Record<string, unknown>> {
  const runtimeOptions = Object.fromEntries(
    Object.entries(app.runtime.options as unknown as Record<string, unknown>).filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v)),
  );
  return {
    config: JSON.parse(JSON.stringify(app.config)) as unknown,
    tradingMode: app.finance?.tradingMode ?? null,
    limits: app.finance ? await app.finance.limits() : null,
    tools: app.tools.list().map((t) => t.name).sort(),
    runtime: runtimeOptions,
    // The jobs and their intervals (the clock-dependent next-run times left out).
    background: app.background.describe().replace(/, next [^)]*\)/g, ')'),
    model: app.modelStatus.configured,
    workspace: app.workspace !== undefined,
  };
}

describe('every option set to undefined resolves as if it were left out', () => {
  it('walks CreateAppOptions and its nested option objects', async () => {
    const dataDir = temp();
    const env = { MINARA_TRADING_MODE: 'shadow', MINARA_HEARTBEAT_EVERY: '45m', MINARA_DAILY_BUDGET_USD: '3', MEMORY_EXTRACTION: 'off', MINARA_CHART_PNG: '0' };
    const venue = liveVenue();
    const base = (): Record<string, unknown> => ({
      envFileDir: false, env, logger: silentLogger, config: { dataDir, maxSteps: 7 }, model: createScriptedModel([{ text: 'ok' }]),
      finance: { provider: venue.provider, market: venue.market, autopilot: false },
      browser: false,
    });
    // What the app resolved, or the error createApp refused with (leaving a required key out may be refused: then
    // setting it undefined must be refused the same way).
    const build = async (options: Record<string, unknown>): Promise<Record<string, unknown>> => {
      let app: MinaraApp;
      try {
        app = await createApp({ storage: createInMemoryStorage(), ...options } as CreateAppOptions);
      } catch (error) {
        return { refused: error instanceof Error ? error.message : String(error) };
      }
      try {
        return await snapshot(app);
      } finally {
        await app.close();
      }
    };
    const baseline = await build(base());
    expect(baseline.tradingMode).toBe('shadow');
    const paths = optionPaths();
    // The walk reaches the nested objects that matter (finance.tradingMode is the attack above).
    expect(paths.map((p) => p.join('.'))).toEqual(expect.arrayContaining(['finance', 'finance.tradingMode', 'finance.limits', 'runtime.maxSteps', 'background.heartbeatEveryMs', 'config.dataDir', 'config.maxSteps', 'env', 'storage']));
    const wrong: string[] = [];
    for (const p of paths) {
      // `env` undefined means process.env, `storage` undefined the default SQLite file: compare with leaving each out.
      const withUndefined = base();
      const without = base();
      const [top, key] = p as [string, string | undefined];
      if (key === undefined) {
        withUndefined[top] = undefined;
        delete without[top];
      } else {
        withUndefined[top] = { ...(withUndefined[top] as object | undefined), [key]: undefined };
        const rest = { ...(without[top] as Record<string, unknown> | undefined) };
        delete rest[key];
        without[top] = rest;
      }
      const expected = top === 'storage' || base()[top] !== undefined ? await build(without) : baseline;
      const got = await build(withUndefined);
      for (const field of new Set([...Object.keys(expected), ...Object.keys(got)])) {
        if (JSON.stringify(got[field]) !== JSON.stringify(expected[field])) wrong.push(`${p.join('.')}: ${field} ${JSON.stringify(got[field])} instead of ${JSON.stringify(expected[field])}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(paths.length).toBeGreaterThan(60);
  }, 600_000);
});
