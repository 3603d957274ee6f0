import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { MinaraError } from '../errors/minara-error';
import { QUICKJS_WORKER_SOURCE } from './quickjs-worker-source';

/** Limits of one sandbox run. */
export interface CodeSandboxLimits {
  /** Wall time of the run; the interrupt handler stops the code, and the worker is killed one second later if it did not. @default 5000 */
  readonly timeoutMs?: number | undefined;
  /** Memory a run may allocate: the run's WebAssembly memory cannot grow past 16 MiB (the engine's initial memory) plus this, rounded up to 64 KiB; past it the run ends with `memory`. @default 64 MiB */
  readonly memoryBytes?: number | undefined;
  /** Characters of the result's JSON. @default 262144 */
  readonly maxOutputBytes?: number | undefined;
  /** Characters of captured `console.log` output; past it lines are dropped and `logsCut` is set. @default 16384 */
  readonly maxLogBytes?: number | undefined;
}

/** What one run returns. */
export type CodeSandboxResult =
  | { readonly ok: true; readonly value: unknown; readonly logs: readonly string[]; readonly logsCut: boolean }
  | {
      readonly ok: false;
      /** `timeout`, `memory`, `stack` (recursion too deep), `output` (result too large), `error` (the code threw), `crash` (the engine failed; restarted). */
      readonly kind: 'timeout' | 'memory' | 'stack' | 'output' | 'error' | 'crash';
      readonly message: string;
      readonly logs: readonly string[];
      readonly logsCut: boolean;
    };

/** A code sandbox: runs JavaScript on JSON input and returns JSON. */
export interface CodeSandbox {
  /** Which engine (`quickjs`). */
  readonly engine: string;
  /** Run `code` (a function body that `return`s a JSON value; the input is `data`). Runs are queued, one at a time. */
  run(code: string, input: unknown, options?: CodeSandboxLimits & { readonly signal?: AbortSignal | undefined }): Promise<CodeSandboxResult>;
  /** Start the worker and load the engine now (otherwise the first run does). */
  warm(): Promise<void>;
  /** Stop the worker. */
  close(): Promise<void>;
}

/** Options of {@link createQuickJsSandbox}. */
export interface QuickJsSandboxOptions extends CodeSandboxLimits {
  /** Stack the sandboxed code may use (deep recursion ends with a `stack` error). @default 262144 */
  readonly stackBytes?: number | undefined;
  /** Characters of the input's JSON. @default 5 MiB */
  readonly maxInputBytes?: number | undefined;
}

/** The limits of one run, every field set. */
interface RunLimits {
  readonly timeoutMs: number;
  readonly memoryBytes: number;
  readonly maxOutputBytes: number;
  readonly maxLogBytes: number;
}

interface WorkerReply {
  readonly id?: number;
  readonly ready?: boolean;
  readonly ok?: boolean;
  readonly json?: string;
  readonly kind?: string;
  readonly message?: string;
  readonly logs?: string[];
  readonly logsCut?: boolean;
  /** The run's WebAssembly memory grew past its initial 16 MiB: the worker is ended so the memory is freed now. */
  readonly grew?: boolean;
}

const positive = (name: string, v: number | undefined, fallback: number): number => {
  const n = v ?? fallback;
  if (!(Number.isFinite(n) && n > 0)) throw new MinaraError('CONFIG_INVALID', `createQuickJsSandbox: "${name}" must be a positive number, got ${String(v)}.`);
  return n;
};

/** The global `WebAssembly.Module` constructor (this package's TypeScript lib has only the namespace's types). */
const WasmModule = (globalThis as unknown as { readonly WebAssembly: { readonly Module: new (bytes: Uint8Array) => object } }).WebAssembly.Module;
let compiledWasm: object | undefined;
/** The QuickJS WebAssembly module, compiled once per process. */
function quickJsWasmModule(require: NodeJS.Require): object {
  compiledWasm ??= new WasmModule(readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
  return compiledWasm;
}

/**
 * A JavaScript sandbox on QuickJS compiled to WebAssembly (`quickjs-emscripten-core` with the
 * `@jitl/quickjs-wasmfile-release-sync` build), run in a worker thread. Each run gets a fresh QuickJS runtime with
 * a memory limit, a stack limit and an interrupt handler at the deadline; the worker is killed (and replaced on the
 * next run) if a run outlives its deadline by a second or the engine traps, so a runaway run never blocks the host's
 * event loop or leaves a damaged engine behind. The sandboxed code sees no host object: no `require`, `process`,
 * `fetch`/`XMLHttpRequest`, timers, file system or environment; its input is `data` (parsed from JSON inside the
 * sandbox) and its result is `JSON.stringify`-ed inside the sandbox and size-checked before it is copied out.
 *
 * @example
 * ```ts
 * const sandbox = createQuickJsSandbox();
 * const r = await sandbox.run('return data.map((x) => x * 2)', [1, 2, 3]); // { ok: true, value: [2, 4, 6], … }
 * await sandbox.close();
 * ```
 */
export function createQuickJsSandbox(options: QuickJsSandboxOptions = {}): CodeSandbox {
  const defaults = {
    timeoutMs: positive('timeoutMs', options.timeoutMs, 5_000),
    memoryBytes: positive('memoryBytes', options.memoryBytes, 64 * 1024 * 1024),
    maxOutputBytes: positive('maxOutputBytes', options.maxOutputBytes, 262_144),
    maxLogBytes: positive('maxLogBytes', options.maxLogBytes, 16_384),
  };
  const stackBytes = positive('stackBytes', options.stackBytes, 262_144);
  const maxInputBytes = positive('maxInputBytes', options.maxInputBytes, 5 * 1024 * 1024);
  const require = createRequire(import.meta.url);
  let worker: { thread: Worker; ready: Promise<void> } | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let nextId = 1;
  let closed = false;

  const start = () => {
    if (worker) return worker;
    // node:worker_threads loads with the first run, not with the package.
    const { Worker: WorkerThread } = require('node:worker_threads') as typeof import('node:worker_threads');
    const thread = new WorkerThread(QUICKJS_WORKER_SOURCE, {
      eval: true,
      workerData: {
        corePath: require.resolve('quickjs-emscripten-core'),
        variantPath: require.resolve('@jitl/quickjs-wasmfile-release-sync'),
        // Compiled once per process and shared with every worker (a new one after a run that grew its memory), so a
        // fresh worker neither compiles the engine again nor starts from unoptimised code.
        wasmModule: quickJsWasmModule(require),
      },
      // The host side of the worker stays small; the sandbox heap is the WebAssembly memory, outside V8's heap, and
      // is bounded by that memory's maximum (set per run in the worker), which resourceLimits cannot bound.
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32, stackSizeMb: 8 },
      stdout: true,
      stderr: true,
    });
    thread.unref();
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: WorkerReply) => {
        if (m.ready === undefined) return;
        thread.off('message', onMessage);
        if (m.ready) resolve();
        else reject(new MinaraError('INTERNAL', `run_code: the sandbox engine did not load: ${m.message ?? 'unknown error'}`));
      };
      thread.on('message', onMessage);
      thread.once('error', (e) => reject(new MinaraError('INTERNAL', `run_code: the sandbox worker failed to start: ${e.message}`)));
    });
    const current = { thread, ready };
    thread.once('exit', () => {
      if (worker === current) worker = undefined;
    });
    worker = current;
    return current;
  };

  const kill = async (w: { thread: Worker }) => {
    if (worker === w) worker = undefined;
    await w.thread.terminate().catch(() => {});
  };

  const runOne = async (code: string, inputJson: string, limits: RunLimits, signal: AbortSignal | undefined): Promise<CodeSandboxResult> => {
    const w = start();
    await w.ready;
    const id = nextId++;
    return new Promise<CodeSandboxResult>((resolve) => {
      let settled = false;
      const finish = (r: CodeSandboxResult, killWorker: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        w.thread.off('message', onMessage);
        w.thread.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        w.thread.unref();
        if (killWorker) void kill(w);
        resolve(r);
      };
      const onMessage = (m: WorkerReply) => {
        if (m.id !== id) return;
        const logs = m.logs ?? [];
        const logsCut = m.logsCut === true;
        // A run that grew its memory past the initial 16 MiB ends the worker: the next run starts a new one, and the
        // memory is returned to the system now rather than whenever V8 collects the old WebAssembly memory.
        const recycle = m.grew === true;
        if (m.ok) {
          let value: unknown = null;
          try {
            value = JSON.parse(m.json ?? 'null');
          } catch {
            return finish({ ok: false, kind: 'error', message: 'the result is not valid JSON', logs, logsCut }, recycle);
          }
          return finish({ ok: true, value, logs, logsCut }, recycle);
        }
        const kind = (['timeout', 'memory', 'stack', 'output', 'error', 'crash'] as const).find((k) => k === m.kind) ?? 'error';
        finish({ ok: false, kind, message: m.message ?? 'failed', logs, logsCut }, kind === 'crash' || recycle);
      };
      const onExit = () => finish({ ok: false, kind: 'crash', message: 'the sandbox worker stopped; it is restarted for the next run', logs: [], logsCut: false }, false);
      const onAbort = () => finish({ ok: false, kind: 'timeout', message: 'cancelled', logs: [], logsCut: false }, true);
      // The interrupt handler stops the code at the deadline; a run stuck inside one long native operation is
      // stopped by killing the worker a second later.
      const timer = setTimeout(() => finish({ ok: false, kind: 'timeout', message: `stopped after ${limits.timeoutMs} ms`, logs: [], logsCut: false }, true), limits.timeoutMs + 1_000);
      w.thread.on('message', onMessage);
      w.thread.once('exit', onExit);
      // Referenced while a run is going, so a script awaiting it is not ended under it.
      w.thread.ref();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      w.thread.postMessage({ id, code, inputJson, stackBytes, ...limits });
    });
  };

  return {
    engine: 'quickjs',
    async run(code, input, runOptions = {}) {
      if (closed) throw new MinaraError('INVALID_ARGUMENT', 'run_code: the sandbox is closed.');
      if (typeof code !== 'string' || code.trim() === '') throw new MinaraError('INVALID_ARGUMENT', 'code: expected JavaScript source (a function body that returns a JSON value).');
      let inputJson: string;
      try {
        inputJson = JSON.stringify(input ?? null);
      } catch {
        throw new MinaraError('INVALID_ARGUMENT', 'data: expected a JSON value.');
      }
      if (inputJson.length > maxInputBytes) throw new MinaraError('INVALID_ARGUMENT', `data: ${inputJson.length} characters of JSON; the limit is ${maxInputBytes}.`);
      const limits: RunLimits = {
        timeoutMs: Math.min(runOptions.timeoutMs ?? defaults.timeoutMs, defaults.timeoutMs),
        memoryBytes: Math.min(runOptions.memoryBytes ?? defaults.memoryBytes, defaults.memoryBytes),
        maxOutputBytes: Math.min(runOptions.maxOutputBytes ?? defaults.maxOutputBytes, defaults.maxOutputBytes),
        maxLogBytes: Math.min(runOptions.maxLogBytes ?? defaults.maxLogBytes, defaults.maxLogBytes),
      };
      const job = queue.then(() => runOne(code, inputJson, limits, runOptions.signal));
      queue = job.catch(() => {});
      return job;
    },
    async warm() {
      await start().ready;
    },
    async close() {
      closed = true;
      await queue;
      if (worker) await kill(worker);
    },
  };
}
