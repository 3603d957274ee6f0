import { z } from 'zod';
import type { ArtifactStore } from '../artifacts/types';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import { err } from '../tools/envelope';
import type { ToolEntry, ToolRegistry } from '../tools/types';
import type { CodeSandbox } from './quickjs-sandbox';

/** Options of {@link createRunCodeTools}. */
export interface RunCodeToolsOptions {
  /** The JavaScript sandbox. @default none: give `createQuickJsSandbox()` (createApp does) */
  readonly sandbox: CodeSandbox;
  /** A Python sandbox (`createE2bSandbox`, when `E2B_API_KEY` is set); without it the tool takes JavaScript only. */
  readonly python?: CodeSandbox | undefined;
  /** Where `chart` results are saved (`create_chart`'s store); without it `chart` is refused. */
  readonly artifacts?: ArtifactStore | undefined;
  /** The registry `inputs` are read through (set by `attach`); without it `inputs` is refused. */
  readonly registry?: (() => ToolRegistry | undefined) | undefined;
  /** The tenant when a call has none. @default 'default' */
  readonly defaultUserId?: string | undefined;
  /** Tool calls one run may read its data from. @default 4 */
  readonly maxInputs?: number | undefined;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;

/**
 * `run_code` (tool set `code`, CONFIRM_ONCE, counts as analysis): computation in a sandbox. The model passes code,
 * JSON `data` and optionally `inputs` — side-effect-free tool calls (`sideEffects: false`, e.g. `get_ohlcv`) run through the registry in a
 * side-effect-free context (the gate refuses any other tool, nested calls included), whose results are added to `data` under their names, so long series never pass through the model — and
 * gets `{ result, logs }` back. JavaScript runs in the local QuickJS WebAssembly sandbox: the code is a function
 * body over `data` that `return`s a JSON value. Python runs on e2b when it is configured: the code sets `result`.
 * With `chart: { title }` the result's `chart` field (a Vega-Lite spec with inline `data.values`) is saved as a chart
 * artifact and its `chart://` URI returned.
 *
 * CONFIRM_ONCE: the user confirms code execution once per session, and autonomous sources (cron, webhook,
 * workflow, heartbeat) are refused unless a stored grant covers `run_code`.
 */
export function createRunCodeTools(options: RunCodeToolsOptions): ToolEntry[] {
  if (typeof options?.sandbox?.run !== 'function') throw new MinaraError('CONFIG_INVALID', 'createRunCodeTools: "sandbox" must be a CodeSandbox (createQuickJsSandbox()).');
  const { sandbox, python, artifacts, registry, defaultUserId = 'default', maxInputs = 4 } = options;
  const languages = python ? (['javascript', 'python'] as const) : (['javascript'] as const);

  return [
    defineTool({
      name: 'run_code',
      toolSet: 'code',
      description:
        'Compute in a sandbox (no network, no files): indicators, statistics, backtests over data. ' +
        'JavaScript: the code is a function body over `data` that returns a JSON value, e.g. "const c = data.ohlcv.candles.map(k => k.c); return { last: c.at(-1) }". ' +
        (python ? 'Python (e2b): set `result`; the input is `data`. ' : '') +
        'Pass small data inline in `data`; read long series with `inputs` ([{ name: "ohlcv", tool: "get_ohlcv", args: { symbol: "BTC", limit: 500 } }]) so they go straight to the code. ' +
        'For a chart, pass chart: { title } and return { chart: <Vega-Lite spec with data.values>, ... }. console.log output comes back as logs.',
      inputSchema: z.object({
        code: z.string().min(1).max(20_000),
        language: z.enum(languages).nullish().describe(`Default javascript.${python ? ' python runs on e2b.' : ''}`),
        data: z.unknown().optional().describe('Any JSON value; the code sees it as `data` (an object when inputs are given).'),
        inputs: z
          .array(z.object({ name: z.string().regex(NAME), tool: z.string().min(1).max(64), args: z.record(z.string(), z.unknown()).nullish() }))
          .max(maxInputs)
          .nullish()
          .describe('Read-only tool calls whose data is added to `data` under `name`.'),
        chart: z.object({ title: z.string().min(1).max(300), description: z.string().max(2_000).nullish() }).nullish().describe('Save the result\'s `chart` (Vega-Lite) as a chart artifact.'),
      }),
      permissionTier: PermissionTier.CONFIRM_ONCE,
      isAnalysis: true,
      timeoutMs: 120_000,
      execute: async (input, ctx) => {
        const language = input.language ?? 'javascript';
        const target = language === 'python' ? python : sandbox;
        if (!target) throw new MinaraError('INVALID_ARGUMENT', 'language: python needs the e2b sandbox (E2B_API_KEY); use javascript');
        if (input.chart && !artifacts) throw new MinaraError('INVALID_ARGUMENT', 'chart: artifacts are off in this app; return the numbers instead');

        let data: unknown = input.data ?? null;
        if (input.inputs && input.inputs.length > 0) {
          const tools = registry?.();
          if (!tools) throw new MinaraError('INVALID_ARGUMENT', 'inputs: not available here; pass the data inline');
          if (data !== null && (typeof data !== 'object' || Array.isArray(data))) throw new MinaraError('INVALID_ARGUMENT', 'data: must be an object (or absent) when inputs are given, so each input can be added under its name');
          const merged: Record<string, unknown> = { ...(data as Record<string, unknown> | null) };
          for (const item of input.inputs) {
            if (!tools.get(item.tool)) throw new MinaraError('INVALID_ARGUMENT', `inputs: no tool "${item.tool}"`);
            // Through dispatch in this call's context, narrowed to side-effect-free tools: the gate refuses any tool
            // not declared `sideEffects: false` (memory_write, a trade, run_code itself), also when called from
            // inside an input tool; hooks and audit see it as a call of this turn.
            const outcome = await tools.dispatchDetailed(item.tool, item.args ?? {}, { context: { ...ctx.call, sideEffectFree: true }, signal: ctx.signal });
            if (!outcome.envelope.ok && outcome.envelope.code === 'SIDE_EFFECTS_REFUSED') {
              throw new MinaraError('INVALID_ARGUMENT', `inputs: "${item.tool}" is not a read-only data tool; only side-effect-free tools (sideEffects: false, e.g. get_ohlcv) can feed run_code`);
            }
            if (!outcome.envelope.ok) throw new MinaraError('TOOL_EXECUTION_FAILED', `inputs: ${item.tool} failed: ${outcome.envelope.error}`, { retryable: outcome.envelope.retryable });
            merged[item.name] = outcome.envelope.data;
          }
          data = merged;
        }

        const run = await target.run(input.code, data, { signal: ctx.signal });
        if (!run.ok) {
          const what: Record<typeof run.kind, string> = {
            timeout: 'the code ran out of time',
            memory: 'the code ran out of memory',
            stack: 'the code recursed too deeply',
            output: 'the result is too large (return a summary, not the whole series)',
            error: 'the code threw an error',
            crash: 'the sandbox engine failed (it is restarted for the next run)',
          };
          const logs = run.logs.join('\n');
          return err(`run_code (${target.engine}): ${what[run.kind]}: ${run.message}${logs ? `\nlogs before it stopped:\n${logs.slice(-2_000)}` : ''}`, {
            code: 'TOOL_EXECUTION_FAILED',
            retryable: false,
          });
        }
        let result = run.value;
        let chart: Record<string, unknown> | undefined;
        if (input.chart && artifacts) {
          const spec = typeof result === 'object' && result !== null && !Array.isArray(result) ? (result as Record<string, unknown>).chart : undefined;
          if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
            throw new MinaraError('ARTIFACT_INVALID', 'chart: the code must return { chart: <Vega-Lite spec with data.values>, ... } when chart is asked for');
          }
          const a = await artifacts.createChart(
            { userId: ctx.call.userId ?? defaultUserId, sessionId: ctx.call.sessionId, ...(ctx.call.turnId ? { turnId: ctx.call.turnId } : {}) },
            { title: input.chart.title, spec: spec as Record<string, unknown>, ...(input.chart.description ? { description: input.chart.description } : {}) },
          );
          const { chart: _omit, ...rest } = result as Record<string, unknown>;
          result = rest;
          chart = { uri: a.uri, id: a.id, note: `Put ${a.uri} in your answer where the chart belongs.` };
        }
        return { engine: target.engine, result, ...(run.logs.length > 0 ? { logs: run.logs } : {}), ...(run.logsCut ? { logsCut: true } : {}), ...(chart ? { chart } : {}) };
      },
    }),
  ];
}
