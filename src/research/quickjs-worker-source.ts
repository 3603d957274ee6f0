/**
 * The code of the sandbox worker thread, as plain CommonJS (it runs as `new Worker(source, { eval: true })`, so no
 * bundler or test transform ever rewrites it). It gets the QuickJS WebAssembly module compiled by the host, then runs one job per
 * message in a WebAssembly instance with a memory of its own (kept for the next job of the same limit until a job grows
 * that memory, which ends the worker): `initial` 16 MiB (the build's initial memory,
 * which the engine itself uses about 1 MiB of) and `maximum` 16 MiB + the job's `memoryBytes`, rounded up to a 64 KiB
 * page. The WebAssembly memory's maximum is the bound that holds: QuickJS's own `setMemoryLimit` is also set, but in
 * this build (no `malloc_usable_size`) it counts 8 bytes per allocation whatever its size, so large arrays,
 * typed arrays and strings pass it. When the memory cannot grow, the engine's allocator gets NULL and QuickJS
 * throws `out of memory`; a failed `grow` is also recorded, so a run that ran out while throwing (the error itself
 * could not be allocated) is still reported as `memory`. Within the instance: a fresh QuickJS runtime and context per
 * job (nothing survives between runs), with the stack limit and an interrupt handler at the deadline set before any
 * of the job's code runs. The context gets nothing of the host: no `require`, `process`, `fetch`, timers or file
 * system; only `console.log` (captured, capped) and the input as a JSON string it parses itself. The result is
 * `JSON.stringify`-ed inside the sandbox and its size checked before it is copied out.
 *
 * Messages in: `{ id, code, inputJson, timeoutMs, memoryBytes, stackBytes, maxOutputBytes, maxLogBytes }`.
 * Messages out: `{ id, ok: true, json, logs, logsCut, grew }` or `{ id, ok: false, kind, message, logs, logsCut, grew }`
 * where kind is `timeout`, `memory`, `stack`, `output`, `error` or `crash` (after a crash the worker exits; the host
 * starts a new one) and `grew` says the run's memory grew past its initial size (the host then ends this worker, so
 * the memory goes back to the system at once rather than at the next garbage collection).
 */
export const QUICKJS_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const core = require(workerData.corePath);
const variantModule = require(workerData.variantPath);
const variant = variantModule.default || variantModule;
const PAGE = 65536;
const INITIAL_PAGES = 256; // the build's INITIAL_MEMORY (16 MiB)
const wasmModulePromise = Promise.resolve(workerData.wasmModule); // compiled once by the host, shared by every worker

/** A QuickJS module in a fresh WebAssembly memory that cannot grow past 16 MiB + memoryBytes. */
async function newModule(memoryBytes) {
  const wasmModule = await wasmModulePromise;
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: INITIAL_PAGES + Math.ceil(memoryBytes / PAGE) });
  const state = { growFailed: false, memory };
  const grow = memory.grow.bind(memory);
  // Emscripten tries a generous size first and smaller ones after: only a failure of the last attempt (none after
  // it succeeded) means the allocation could not be made.
  memory.grow = (pages) => {
    try {
      const before = grow(pages);
      state.growFailed = false;
      return before;
    } catch (error) { state.growFailed = true; throw error; }
  };
  const mod = await core.newQuickJSWASMModuleFromVariant(core.newVariant(variant, { wasmModule, wasmMemory: memory }));
  return { mod, state };
}

newModule(PAGE).then(() => parentPort.postMessage({ ready: true }), (error) => {
  parentPort.postMessage({ ready: false, message: String(error && error.message || error) });
  process.exit(1);
});

function describe(vm, handle) {
  const t = vm.typeof(handle);
  if (t === 'string') return vm.getString(handle);
  try { return JSON.stringify(vm.dump(handle)); } catch (e) { return '[' + t + ']'; }
}

function runJob(mod, job, memoryState) {
  const logs = [];
  let logBytes = 0;
  let logsCut = false;
  let interrupted = false;
  const deadline = Date.now() + job.timeoutMs;
  const rt = mod.newRuntime();
  rt.setMemoryLimit(job.memoryBytes);
  rt.setMaxStackSize(job.stackBytes);
  rt.setInterruptHandler(() => {
    if (Date.now() > deadline) { interrupted = true; return true; }
    return false;
  });
  const vm = rt.newContext();
  const out = { logs, logsCut: false };
  try {
    const consoleObject = vm.newObject();
    const log = vm.newFunction('log', (...args) => {
      if (logsCut) return;
      const line = args.map((h) => describe(vm, h)).join(' ');
      if (logBytes + line.length > job.maxLogBytes) { logsCut = true; return; }
      logBytes += line.length;
      logs.push(line);
    });
    for (const name of ['log', 'info', 'warn', 'error', 'debug']) vm.setProp(consoleObject, name, log);
    vm.setProp(vm.global, 'console', consoleObject);
    log.dispose();
    consoleObject.dispose();
    const input = vm.newString(job.inputJson);
    vm.setProp(vm.global, '__minara_input', input);
    input.dispose();
    const wrapped = '"use strict";\nconst __minara_data = JSON.parse(globalThis.__minara_input);\ndelete globalThis.__minara_input;\n' +
      'globalThis.__minara_result = (function (data) {\n' + job.code + '\n})(__minara_data);\n';
    const fail = (error) => {
      const name = error && error.name ? String(error.name) : 'Error';
      const message = error && error.message !== undefined ? String(error.message) : String(error);
      let kind = 'error';
      if (interrupted || message === 'interrupted') kind = 'timeout';
      else if (memoryState.growFailed || /out of memory|string too long/i.test(message)) kind = 'memory';
      else if (/stack overflow/i.test(message)) kind = 'stack';
      out.logsCut = logsCut;
      return Object.assign(out, { ok: false, kind, message: name + ': ' + message });
    };
    const evaluated = vm.evalCode(wrapped, 'run_code.js');
    if (evaluated.error) {
      const error = vm.dump(evaluated.error);
      evaluated.error.dispose();
      return fail(error);
    }
    evaluated.value.dispose();
    // A returned promise (an async body) settles through the job queue: no timers or I/O exist in here, so jobs
    // run until it settles or nothing is left to run.
    const returned = vm.getProp(vm.global, '__minara_result');
    let state = vm.getPromiseState(returned);
    while (state.type === 'pending') {
      const jobs = rt.executePendingJobs();
      if (jobs.error) {
        const error = vm.dump(jobs.error);
        jobs.error.dispose();
        returned.dispose();
        return fail(error);
      }
      const ran = jobs.value;
      state = vm.getPromiseState(returned);
      if (state.type === 'pending' && ran === 0) {
        returned.dispose();
        return fail({ name: 'Error', message: 'the returned promise never settles (the sandbox has no timers or I/O)' });
      }
    }
    if (state.type === 'rejected') {
      const error = vm.dump(state.error);
      state.error.dispose();
      returned.dispose();
      return fail(error);
    }
    if (!state.notAPromise) {
      vm.setProp(vm.global, '__minara_result', state.value);
      state.value.dispose();
    }
    returned.dispose();
    const result = vm.evalCode('globalThis.__minara_result === undefined ? "null" : JSON.stringify(globalThis.__minara_result)', 'run_code_result.js');
    out.logsCut = logsCut;
    if (result.error) {
      const error = vm.dump(result.error);
      result.error.dispose();
      return fail(error);
    }
    if (vm.typeof(result.value) !== 'string') {
      result.value.dispose();
      return Object.assign(out, { ok: false, kind: 'error', message: 'TypeError: the result cannot be converted to JSON' });
    }
    const lengthHandle = vm.getProp(result.value, 'length');
    const length = vm.getNumber(lengthHandle);
    lengthHandle.dispose();
    if (length > job.maxOutputBytes) {
      result.value.dispose();
      return Object.assign(out, { ok: false, kind: 'output', message: 'the result is ' + length + ' characters of JSON; the limit is ' + job.maxOutputBytes });
    }
    const json = vm.getString(result.value);
    result.value.dispose();
    return Object.assign(out, { ok: true, json });
  } finally {
    try { vm.dispose(); rt.dispose(); } catch (e) { /* a runtime stopped mid-allocation may not free cleanly; it is dropped either way */ }
  }
}

// The instance of the last run, kept for the next run of the same limit while its memory has not grown (each run
// still gets a fresh QuickJS runtime; a run that grew the memory ends this worker).
let cached;
parentPort.on('message', async (job) => {
  let reply;
  let state;
  try {
    if (!cached || cached.memoryBytes !== job.memoryBytes) cached = Object.assign(await newModule(job.memoryBytes), { memoryBytes: job.memoryBytes });
    state = cached.state;
    state.growFailed = false;
    reply = runJob(cached.mod, job, state);
  } catch (error) {
    // A trap inside the WebAssembly module (a host stack overflow, a corrupted heap): report it and exit, so the
    // next run starts from a fresh worker.
    const memory = state && state.growFailed;
    parentPort.postMessage({ id: job.id, ok: false, kind: memory ? 'memory' : 'crash', message: memory ? 'out of memory: ' + String(error && error.message || error) : String(error && error.message || error), logs: [], logsCut: false, grew: true });
    process.exit(1);
    return;
  }
  const grew = state.memory.buffer.byteLength > INITIAL_PAGES * PAGE;
  parentPort.postMessage(Object.assign({ id: job.id, grew }, reply));
});
`;
