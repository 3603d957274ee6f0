/**
 * The interactive REPL: a `node:readline` loop over any input/output streams (a terminal, a pipe, or
 * PassThrough streams in tests). Messages run turns on the app's runtime; `/commands` run locally.
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { MinaraApp } from '@minara/agent';
import { createEventRenderer, createStyle, type Style } from './render';
import { createConfirm, createLineReader, createNotices, createReplContext, createSessionIds, createSigintHandler, createTurnRunner, type TurnControl } from './repl-parts';
import { runSlashCommand } from './slash-commands';
import { createSpinner } from './spinner';

/** The prompt shown when the REPL is ready for input. */
export const PROMPT = '› ';

/** The prompt with the emergency stop's state: `⏹ stopped (global) › ` while a stop applies to the REPL's user. */
export function stopPrompt(status: { readonly engaged: boolean; readonly scope?: 'global' | 'user' | undefined; readonly engagedBy?: 'operator' | 'user' | undefined }): string {
  const which = status.scope !== 'user' ? 'global' : status.engagedBy === 'operator' ? "the operator's stop" : 'your stop';
  return status.engaged ? `⏹ stopped (${which}) ${PROMPT}` : PROMPT;
}
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
  const view = { json: false, verbose: options.verbose === true };
  // The terminal's width; piped, the shell's COLUMNS when exported, else 100.
  const columns = () => options.columns?.() ?? (output as NodeJS.WriteStream).columns ?? (Number(process.env['COLUMNS']) || 100);
  const renderer = createEventRenderer({
    write, style, color, json: () => view.json, approvalsAskedLater: true, verbose: () => view.verbose,
    ...(materializer ? { artifactPath: (id: string) => path.join(materializer.dirFor(id), 'index.html') } : {}),
  });
  const spinner = createSpinner({ write, enabled: isTTY });
  const sessions = createSessionIds(options.newSessionId);

  const rl = readline.createInterface({ input, output, terminal: isTTY, historySize: HISTORY_SIZE, history: loadHistory(isTTY ? historyFile : false), prompt: PROMPT });
  const reader = createLineReader(rl, isTTY, write);
  const control: TurnControl = { exiting: false, current: undefined, answering: false };
  const exit = () => {
    control.exiting = true;
    control.current?.abort(new Error('exit'));
    if (!reader.closed) rl.close();
  };
  const onSigint = createSigintHandler({ control, rl, reader, write, style, isTTY, exit });
  rl.on('SIGINT', onSigint);
  if (options.handleProcessSignals) process.on('SIGINT', onSigint);

  const confirm = createConfirm(control, reader, style);
  const runTurn = createTurnRunner({ app, renderer, spinner, style, control, confirm, json: () => view.json });
  const ctx = createReplContext({ app, sessions, renderer, confirm, runTurn, view, columns, exit, backgroundInfo: options.backgroundInfo });

  if (options.banner) write(`${options.banner}\n`);
  if (view.verbose && options.backgroundInfo) write(`${style.dim(options.backgroundInfo)}\n`);
  write(startLines(app, style, sessions.current));

  const notices = createNotices(app, renderer, style);
  // The stop's state is read from storage before each prompt, so one engaged in another process shows here too.
  const me = app.memory.scope.userId;
  const promptNow = () => app.tools.emergencyStop.status({ userId: me }).then(stopPrompt, () => PROMPT);
  try {
    while (!control.exiting) {
      await notices.show();
      const line = await reader.next(await promptNow());
      if (line === undefined) break;
      const text = line.trim();
      if (text === '') continue;
      if (isTTY) saveHistoryLine(historyFile, text);
      if (text.startsWith('/')) {
        await runSlashCommand(ctx, text);
        continue;
      }
      await runTurn({ sessionId: sessions.current, message: text });
    }
  } finally {
    notices.unsubscribe();
    if (options.handleProcessSignals) process.off('SIGINT', onSigint);
    spinner.stop();
    if (!reader.closed) rl.close();
  }
  return { sessions: sessions.all };
}

/** The two dim lines under the banner: the model (or why there is none) and the session. */
function startLines(app: MinaraApp, style: Style, sessionId: string): string {
  const status = app.modelStatus;
  const model = status.configured ? status.label : style.yellow(`not configured: ${status.reason.replace(/\.$/, '')} (slash commands work; a message explains how to set one)`);
  return `${style.dim(`model: ${model} · session ${sessionId}`)}\n${style.dim('Type /help for commands, /exit to leave.')}\n`;
}
