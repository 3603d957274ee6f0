/**
 * The code of the sandbox worker thread, as plain CommonJS (it runs as `new Worker(source, { eval: true })`, so no
 * bundler or test transform ever rewrites it). It loads the QuickJS WebAssembly module once, then runs one job per
 * message: a fresh QuickJS runtime and context per job (nothing survives between runs), with the memory limit, the
 * stack limit and an interrupt handler at the deadline set before any of the job's code runs. The context gets
 * nothing of the host: no `require`, `process`, `fetch`, timers or file system; only `console.log` (captured, capped)
 * and the input as a JSON string it parses itself. The result is `JSON.stringify`-ed inside the sandbox and its size
 * checked before it is copied out.
 *
 * Messages in: `{ id, code, inputJson, timeoutMs, memoryBytes, stackBytes, maxOutputBytes, maxLogBytes }`.
 * Messages out: `{ id, ok: true, json, logs, logsCut }` or `{ id, ok: false, kind, message, logs, logsCut }` where
 * kind is `timeout`, `memory`, `stack`, `output`, `error` or `crash` (after a crash the worker exits; the host
 * starts a new one).
 */
export const QUICKJS_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const core = require(workerData.corePath);
const variantModule = require(workerData.variantPath);
const variant = variantModule.default || variantModule;
const modulePromise = core.newQuickJSWASMModuleFromVariant(variant);
modulePromise.then(() => parentPort.postMessage({ ready: true }), (error) => {
  parentPort.postMessage({ ready: false, message: String(error && error.message || error) });
  process.exit(1);
});

function describe(vm, handle) {
  const t = vm.typeof(handle);
  if (t === 'string') return vm.getString(handle);
  try { return JSON.stringify(vm.dump(handle)); } catch (e) { return '[' + t + ']'; }
}

function runJob(mod, job) {
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
      else if (/out of memory/i.test(message)) kind = 'memory';
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

parentPort.on('message', async (job) => {
  const mod = await modulePromise;
  let reply;
  try {
    reply = runJob(mod, job);
  } catch (error) {
    // A trap inside the WebAssembly module (a host stack overflow, a corrupted heap): report it and exit, so the
    // next run starts from a fresh module.
    parentPort.postMessage({ id: job.id, ok: false, kind: 'crash', message: String(error && error.message || error), logs: [], logsCut: false });
    process.exit(1);
    return;
  }
  parentPort.postMessage(Object.assign({ id: job.id }, reply));
});
`;
