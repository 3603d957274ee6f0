/**
 * The interactive REPL: a `node:readline` loop over any input/output streams (a terminal, a pipe, or
 * PassThrough streams in tests). Messages run turns on the app's runtime; `/commands` run locally.
 */
import { breakerNotice } from './breakers-command';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { ApprovalDecision, MinaraApp, PendingApproval } from '@minara/agent';
import { previewApproval } from './approval-preview';
import { createEventRenderer, createStyle, formatApproval, loadFinanceWords } from './render';
import { type ReplContext, runSlashCommand } from './slash-commands';
import { createSpinner } from './spinner';

/** The prompt shown when the REPL is ready for input. */
export const PROMPT = '› ';

/** The prompt with the emergency stop's state: `⏹ stopped (global) › ` while a stop applies to the REPL's user. */
export function stopPrompt(status: { readonly engaged: boolean; readonly scope?: 'global' | 'user' | undefined; readonly engagedBy?: 'operator' | 'user' | undefined }): string {
  const which = status.scope !== 'user' ? 'global' : status.engagedBy === 'operator' ? "the operator's stop" : 'your stop';
  return status.engaged ? `⏹ stopped (${which}) ${PROMPT}` : PROMPT;
}
/** A second Ctrl-C within this window exits. */
const DOUBLE_CTRL_C_MS = 2000;
const HISTORY_SIZE = 500;

export interface RunReplOptions {
  readonly app: MinaraApp;
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** A terminal: line editing, history keys, raw-mode Ctrl-C, spinner, colours. @default output.isTTY */
  readonly isTTY?: boolean | undefined;
  /** File the history is loaded from and appended to; `false` for none. @default `${dataDir}/repl_history` */
  readonly historyFile?: string | false | undefined;
  /** ANSI colours. @default isTTY && !NO_COLOR */
  readonly color?: boolean | undefined;
  /** Also treat the process's SIGINT as Ctrl-C (for a piped stdin). @default false */
  readonly handleProcessSignals?: boolean | undefined;
  /** Printed first (e.g. the version). */
  readonly banner?: string | undefined;
  /** What runs in the background (jobs and their schedules): printed at start with `verbose`, and by `/verbose`. */
  readonly backgroundInfo?: string | undefined;
  /** Show the engine's own lines: the background jobs at start, the skills each turn activated (`--verbose`; `/verbose` toggles). @default false */
  readonly verbose?: boolean | undefined;
  /** Terminal width for tables such as `/tools`. @default output.columns, else `COLUMNS`, else 100 */
  readonly columns?: (() => number | undefined) | undefined;
  /** Session ids. @default () => `repl-${Date.now()}` */
  readonly newSessionId?: (() => string) | undefined;
}

/** What a finished REPL reports. */
export interface ReplResult {
  /** Every session id the REPL used, in order. */
  readonly sessions: readonly string[];
}

function loadHistory(file: string | false): string[] {
  if (!file) return [];
  try {
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
    return lines.slice(-HISTORY_SIZE).reverse();
  } catch {
    return [];
  }
}

function saveHistoryLine(file: string | false, line: string): void {
  if (!file) return;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    appendFileSync(file, `${line.replace(/\n/g, ' ')}\n`, { mode: 0o600 });
  } catch {
    // History is a convenience; never fail the REPL over it.
  }
}

/**
 * Run the REPL until `/exit`, end of input, or Ctrl-C at an empty prompt.
 *
 * @example
 * ```ts
 * const app = await buildApp({ dataDir: './data' });
 * await runRepl({ app, input: process.stdin, output: process.stdout, isTTY: process.stdout.isTTY });
 * await app.close();
 * ```
 */
export async function runRepl(options: RunReplOptions): Promise<ReplResult> {
  const { app, input, output } = options;
  const isTTY = options.isTTY ?? Boolean((output as NodeJS.WriteStream).isTTY);
  const color = options.color ?? (isTTY && !process.env['NO_COLOR']);
  const historyFile = options.historyFile ?? path.join(app.config.dataDir, 'repl_history');
  const write = (s: string) => {
    output.write(s);
  };
  const style = createStyle(color);
  const materializer = app.materializer;
  // `/json` shows the whole JSON of tool calls, results and approvals; off, each is one readable line.
  let showJson = false;
  let verbose = options.verbose === true;
  // The terminal's width; piped, the shell's COLUMNS when exported, else 100.
  const columns = () => options.columns?.() ?? (output as NodeJS.WriteStream).columns ?? (Number(process.env['COLUMNS']) || 100);
  const renderer = createEventRenderer({
    write, style, color, json: () => showJson, approvalsAskedLater: true, verbose: () => verbose,
    ...(materializer ? { artifactPath: (id: string) => path.join(materializer.dirFor(id), 'index.html') } : {}),
  });
  const spinner = createSpinner({ write, enabled: isTTY });

  let lastId = '';
  const newSessionId =
    options.newSessionId ??
    (() => {
      let id = `repl-${Date.now()}`;
      if (id <= lastId) id = `${lastId}-1`;
      lastId = id;
      return id;
    });
  const sessions: string[] = [newSessionId()];
  let sessionId = sessions[0]!;

  const rl = readline.createInterface({ input, output, terminal: isTTY, historySize: HISTORY_SIZE, history: loadHistory(isTTY ? historyFile : false), prompt: PROMPT });

  // A line queue: lines typed (or piped) while a turn runs wait here instead of being lost.
  const queued: string[] = [];
  let waiter: ((line: string | undefined) => void) | undefined;
  let closed = false;
  rl.on('line', (line) => {
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w(line);
    } else queued.push(line);
  });
  rl.on('close', () => {
    closed = true;
    const w = waiter;
    waiter = undefined;
    w?.(undefined);
  });

  const nextLine = (prompt: string): Promise<string | undefined> => {
    const line = queued.shift();
    if (!isTTY || closed) write(prompt);
    if (line !== undefined) {
      if (!isTTY) write(`${line}\n`);
      return Promise.resolve(line);
    }
    if (closed) {
      if (!isTTY) write('\n');
      return Promise.resolve(undefined);
    }
    if (isTTY) {
      rl.setPrompt(prompt);
      rl.prompt();
    }
    return new Promise((resolve) => {
      waiter = (l) => {
        if (!isTTY && l !== undefined) write(`${l}\n`);
        if (l === undefined && !isTTY) write('\n');
        resolve(l);
      };
    });
  };

  let exiting = false;
  let current: AbortController | undefined;
  let answering = false;
  let lastSigint = 0;

  const exit = () => {
    exiting = true;
    current?.abort(new Error('exit'));
    if (!closed) rl.close();
  };

  const onSigint = () => {
    const now = Date.now();
    const twice = now - lastSigint < DOUBLE_CTRL_C_MS;
    lastSigint = now;
    if (current) {
      if (twice) return exit();
      current.abort(new Error('cancelled'));
      return;
    }
    if (answering) {
      // Ctrl-C at a y/N question answers No.
      write('\n');
      const w = waiter;
      waiter = undefined;
      w?.('');
      return;
    }
    if (twice || rl.line === '' || !isTTY) {
      write('\n');
      return exit();
    }
    // Ctrl-C with text typed: clear the line, keep going.
    rl.write(null, { ctrl: true, name: 'u' });
    write(`\n${style.dim('(Ctrl-C again to exit)')}\n`);
    rl.prompt();
  };
  rl.on('SIGINT', onSigint);
  if (options.handleProcessSignals) process.on('SIGINT', onSigint);

  const confirm = async (question: string): Promise<boolean> => {
    answering = true;
    try {
      const answer = await nextLine(style.bold(question));
      return /^(y|yes)$/i.test((answer ?? '').trim());
    } finally {
      answering = false;
    }
  };

  /** Run a turn (a message and/or approval decisions), asking for approvals until it settles. */
  // The choices of the last clarifying question: a bare number as the next message picks one.
  let lastChoices: ReadonlyArray<{ label: string; value: string }> = [];
  const runTurn = async (turn: { sessionId: string; message?: string; approvals?: readonly ApprovalDecision[] }): Promise<void> => {
    let message = turn.message;
    const picked = message !== undefined && /^\d+$/.test(message.trim()) ? lastChoices[Number(message.trim()) - 1] : undefined;
    if (picked) message = picked.value;
    lastChoices = [];
    let approvals = turn.approvals;
    await loadFinanceWords();
    renderer.reset();
    for (let round = 0; round < 20 && !exiting; round++) {
      const controller = new AbortController();
      current = controller;
      const pending: PendingApproval[] = [];
      spinner.start();
      try {
        const events = app.runtime.run({
          sessionId: turn.sessionId,
          ...(message !== undefined ? { message } : {}),
          ...(approvals !== undefined ? { approvals } : {}),
          abortSignal: controller.signal,
        });
        for await (const event of events) {
          if (event.type !== 'turn-start') spinner.stop();
          renderer.render(event);
          if (event.type === 'approval-request') pending.push(event);
          if (event.type === 'clarification-request') lastChoices = event.choices;
          if (event.type === 'step-end' && event.finishReason === 'tool-calls') spinner.start();
        }
      } catch (error) {
        spinner.stop();
        if (!controller.signal.aborted) renderer.line(style.red(`  ! ${error instanceof Error ? error.message : String(error)}`));
      } finally {
        spinner.stop();
        renderer.finish();
        current = undefined;
      }
      if (controller.signal.aborted) {
        renderer.line(style.dim('(cancelled)'));
        return;
      }
      if (pending.length === 0) return;
      const decisions: ApprovalDecision[] = [];
      for (const p of pending) {
        const { preview, refused } = await previewApproval(app, { toolName: p.toolName, input: p.input, sessionId: turn.sessionId });
        renderer.line(style.yellow(formatApproval(p, { json: showJson, ...(preview !== undefined ? { preview } : {}), refused })));
        const approved = await confirm('Approve? [y/N] ');
        decisions.push({ approvalId: p.approvalId, approved, reason: approved ? 'approved in the REPL' : 'denied in the REPL' });
        if (exiting) return;
      }
      message = undefined;
      approvals = decisions;
    }
  };

  const ctx: ReplContext = {
    app,
    get sessionId() {
      return sessionId;
    },
    newSession() {
      sessionId = newSessionId();
      sessions.push(sessionId);
      return sessionId;
    },
    print(text) {
      renderer.line(text);
    },
    confirm,
    resume: (sid, approvals) => runTurn({ sessionId: sid, approvals }),
    get json() {
      return showJson;
    },
    set json(on: boolean) {
      showJson = on;
    },
    get verbose() {
      return verbose;
    },
    set verbose(on: boolean) {
      verbose = on;
    },
    get columns() {
      return columns();
    },
    ...(options.backgroundInfo !== undefined ? { backgroundInfo: options.backgroundInfo } : {}),
    exit,
  };

  if (options.banner) write(`${options.banner}\n`);
  if (verbose && options.backgroundInfo) write(`${style.dim(options.backgroundInfo)}\n`);
  const status = app.modelStatus;
  const model = status.configured ? status.label : style.yellow(`not configured: ${status.reason.replace(/\.$/, '')} (slash commands work; a message explains how to set one)`);
  write(`${style.dim(`model: ${model} · session ${sessionId}`)}\n${style.dim('Type /help for commands, /exit to leave.')}\n`);

  // Answers of background turns (heartbeat, your schedule) that arrive between your turns are shown before the next prompt.
  const arrived: string[] = [];
  const unsubscribe = app.background.onDelivery((d) => arrived.push(`${style.dim(`[${d.source} ${d.jobId} · ${d.at.slice(11, 16)} UTC · session ${d.sessionId}]`)}\n${d.text}`));
  // A tripped circuit breaker is one line before the prompt, said again only when its state changes.
  let breakerShown: string | undefined;
  const showArrived = async () => {
    for (const text of arrived.splice(0)) renderer.line(text);
    const notice = await breakerNotice(app).catch(() => undefined);
    if (notice !== breakerShown) {
      if (notice) renderer.line(style.red(notice));
      else if (breakerShown) renderer.line(style.dim('circuit breaker reset: autonomous trades run again.'));
      breakerShown = notice;
    }
  };
  // The stop's state is read from storage before each prompt, so one engaged in another process shows here too.
  const me = app.memory.scope.userId;
  const promptNow = () => app.tools.emergencyStop.status({ userId: me }).then(stopPrompt, () => PROMPT);
  try {
    while (!exiting) {
      await showArrived();
      const line = await nextLine(await promptNow());
      if (line === undefined) break;
      const text = line.trim();
      if (text === '') continue;
      if (isTTY) saveHistoryLine(historyFile, text);
      if (text.startsWith('/')) {
        await runSlashCommand(ctx, text);
        continue;
      }
      await runTurn({ sessionId, message: text });
    }
  } finally {
    unsubscribe();
    if (options.handleProcessSignals) process.off('SIGINT', onSigint);
    spinner.stop();
    if (!closed) rl.close();
  }
  return { sessions };
}

