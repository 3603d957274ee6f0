/**
 * The REPL's parts, wired by `runRepl` (cli/repl.ts): the line reader that queues lines typed while a turn runs,
 * Ctrl-C handling, the yes/no question, the turn runner that asks for approvals until a turn settles, the
 * notices shown before each prompt, and the context slash commands see.
 */
import type readline from 'node:readline';
import type { ApprovalDecision, MinaraApp, PendingApproval } from '@minara/agent';
import { previewApproval } from './approval-preview';
import { breakerNotice } from './breakers-command';
import { type EventRenderer, formatApproval, loadFinanceWords, type Style } from './render';
import type { ReplContext } from './slash-commands';
import type { Spinner } from './spinner';

/** A second Ctrl-C within this window exits. */
const DOUBLE_CTRL_C_MS = 2000;
/** A turn asks for approvals at most this many times before it gives up. */
const MAX_APPROVAL_ROUNDS = 20;

/** What the REPL's parts share about the turn in flight. */
export interface TurnControl {
  /** Set once the REPL is leaving: no new turn or approval round starts. */
  exiting: boolean;
  /** The running turn's controller (Ctrl-C aborts it). */
  current: AbortController | undefined;
  /** A y/N question is waiting for its answer (Ctrl-C answers No). */
  answering: boolean;
}

/** Reads lines one at a time; lines that arrive while a turn runs wait in a queue instead of being lost. */
export interface LineReader {
  /** The next line, after showing `prompt`; undefined at the end of input. */
  next(prompt: string): Promise<string | undefined>;
  /** Answer the line being waited for with an empty line (Ctrl-C at a question). */
  answerEmpty(): void;
  /** Whether the input has ended. */
  readonly closed: boolean;
}

export function createLineReader(rl: readline.Interface, isTTY: boolean, write: (s: string) => void): LineReader {
  const queued: string[] = [];
  let waiter: ((line: string | undefined) => void) | undefined;
  let closed = false;
  const take = () => {
    const w = waiter;
    waiter = undefined;
    return w;
  };
  rl.on('line', (line) => {
    const w = take();
    if (w) w(line);
    else queued.push(line);
  });
  rl.on('close', () => {
    closed = true;
    take()?.(undefined);
  });
  const next = (prompt: string): Promise<string | undefined> => {
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
  return {
    next,
    answerEmpty: () => take()?.(''),
    get closed() {
      return closed;
    },
  };
}

/**
 * Ctrl-C: cancels the running turn (twice quickly exits), answers No at a question, exits at an empty prompt
 * (or twice quickly, or when piped), and otherwise clears the typed line.
 */
export function createSigintHandler(deps: {
  control: TurnControl;
  rl: readline.Interface;
  reader: LineReader;
  write: (s: string) => void;
  style: Style;
  isTTY: boolean;
  exit: () => void;
}): () => void {
  const { control, rl, reader, write, style, isTTY, exit } = deps;
  let lastSigint = 0;
  return () => {
    const now = Date.now();
    const twice = now - lastSigint < DOUBLE_CTRL_C_MS;
    lastSigint = now;
    if (control.current) {
      if (twice) return exit();
      control.current.abort(new Error('cancelled'));
      return;
    }
    if (control.answering) {
      // Ctrl-C at a y/N question answers No.
      write('\n');
      reader.answerEmpty();
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
}

/** A yes/no question: anything but y/yes is No. */
export function createConfirm(control: TurnControl, reader: LineReader, style: Style): (question: string) => Promise<boolean> {
  return async (question) => {
    control.answering = true;
    try {
      const answer = await reader.next(style.bold(question));
      return /^(y|yes)$/i.test((answer ?? '').trim());
    } finally {
      control.answering = false;
    }
  };
}

/** One turn to run: a message and/or approval decisions for a session. */
export interface ReplTurn {
  readonly sessionId: string;
  readonly message?: string | undefined;
  readonly approvals?: readonly ApprovalDecision[] | undefined;
}

interface TurnRunnerDeps {
  app: MinaraApp;
  renderer: EventRenderer;
  spinner: Spinner;
  style: Style;
  control: TurnControl;
  confirm: (question: string) => Promise<boolean>;
  json: () => boolean;
}

/** Runs a turn (a message and/or approval decisions), asking for approvals until it settles. */
export function createTurnRunner(deps: TurnRunnerDeps): (turn: ReplTurn) => Promise<void> {
  const { renderer, control } = deps;
  // The choices of the last clarifying question: a bare number as the next message picks one.
  let lastChoices: ReadonlyArray<{ label: string; value: string }> = [];
  const remember = (choices: ReadonlyArray<{ label: string; value: string }>) => {
    lastChoices = choices;
  };
  return async (turn) => {
    let message = turn.message;
    const picked = message !== undefined && /^\d+$/.test(message.trim()) ? lastChoices[Number(message.trim()) - 1] : undefined;
    if (picked) message = picked.value;
    lastChoices = [];
    let approvals = turn.approvals;
    await loadFinanceWords();
    renderer.reset();
    for (let round = 0; round < MAX_APPROVAL_ROUNDS && !control.exiting; round++) {
      const outcome = await runRound(deps, { sessionId: turn.sessionId, message, approvals }, remember);
      if (outcome === 'cancelled') {
        renderer.line(deps.style.dim('(cancelled)'));
        return;
      }
      if (outcome.length === 0) return;
      const decisions = await askApprovals(deps, turn.sessionId, outcome);
      if (decisions === undefined) return;
      message = undefined;
      approvals = decisions;
    }
  };
}

/** One round of a turn: stream its events to the renderer; returns the approvals it asks for, or 'cancelled'. */
async function runRound(deps: TurnRunnerDeps, turn: ReplTurn, remember: (choices: ReadonlyArray<{ label: string; value: string }>) => void): Promise<PendingApproval[] | 'cancelled'> {
  const { app, renderer, spinner, style, control } = deps;
  const controller = new AbortController();
  control.current = controller;
  const pending: PendingApproval[] = [];
  spinner.start();
  try {
    const events = app.runtime.run({
      sessionId: turn.sessionId,
      ...(turn.message !== undefined ? { message: turn.message } : {}),
      ...(turn.approvals !== undefined ? { approvals: turn.approvals } : {}),
      abortSignal: controller.signal,
    });
    for await (const event of events) {
      if (event.type !== 'turn-start') spinner.stop();
      renderer.render(event);
      if (event.type === 'approval-request') pending.push(event);
      if (event.type === 'clarification-request') remember(event.choices);
      if (event.type === 'step-end' && event.finishReason === 'tool-calls') spinner.start();
    }
  } catch (error) {
    spinner.stop();
    if (!controller.signal.aborted) renderer.line(style.red(`  ! ${error instanceof Error ? error.message : String(error)}`));
  } finally {
    spinner.stop();
    renderer.finish();
    control.current = undefined;
  }
  return controller.signal.aborted ? 'cancelled' : pending;
}

/** Show each approval with its preview and ask; undefined when the REPL is leaving mid-way. */
async function askApprovals(deps: TurnRunnerDeps, sessionId: string, pending: readonly PendingApproval[]): Promise<ApprovalDecision[] | undefined> {
  const { app, renderer, style, control, confirm } = deps;
  const decisions: ApprovalDecision[] = [];
  for (const p of pending) {
    const { preview, refused } = await previewApproval(app, { toolName: p.toolName, input: p.input, sessionId });
    renderer.line(style.yellow(formatApproval(p, { json: deps.json(), ...(preview !== undefined ? { preview } : {}), refused })));
    const approved = await confirm('Approve? [y/N] ');
    decisions.push({ approvalId: p.approvalId, approved, reason: approved ? 'approved in the REPL' : 'denied in the REPL' });
    if (control.exiting) return undefined;
  }
  return decisions;
}

/** The REPL's session ids: the current one and every one used, in order. */
export interface SessionIds {
  readonly current: string;
  readonly all: readonly string[];
  /** Start a new session; returns its id. */
  next(): string;
}

export function createSessionIds(newSessionId?: (() => string) | undefined): SessionIds {
  let lastId = '';
  const make =
    newSessionId ??
    (() => {
      let id = `repl-${Date.now()}`;
      if (id <= lastId) id = `${lastId}-1`;
      lastId = id;
      return id;
    });
  const all: string[] = [make()];
  return {
    get current() {
      return all[all.length - 1]!;
    },
    all,
    next() {
      const id = make();
      all.push(id);
      return id;
    },
  };
}

/** What slash commands see: the app, the session, printing, questions, and the view toggles. */
export function createReplContext(deps: {
  app: MinaraApp;
  sessions: SessionIds;
  renderer: EventRenderer;
  confirm: (question: string) => Promise<boolean>;
  runTurn: (turn: ReplTurn) => Promise<void>;
  view: { json: boolean; verbose: boolean };
  columns: () => number;
  exit: () => void;
  backgroundInfo: string | undefined;
}): ReplContext {
  const { sessions, renderer, view } = deps;
  return {
    app: deps.app,
    get sessionId() {
      return sessions.current;
    },
    newSession: () => sessions.next(),
    print(text) {
      renderer.line(text);
    },
    confirm: deps.confirm,
    resume: (sid, approvals) => deps.runTurn({ sessionId: sid, approvals }),
    get json() {
      return view.json;
    },
    set json(on: boolean) {
      view.json = on;
    },
    get verbose() {
      return view.verbose;
    },
    set verbose(on: boolean) {
      view.verbose = on;
    },
    get columns() {
      return deps.columns();
    },
    ...(deps.backgroundInfo !== undefined ? { backgroundInfo: deps.backgroundInfo } : {}),
    exit: deps.exit,
  };
}

/**
 * What arrived between prompts: answers of background turns (heartbeat, your schedule), and a tripped circuit
 * breaker as one line, said again only when its state changes.
 */
export function createNotices(app: MinaraApp, renderer: EventRenderer, style: Style): { show(): Promise<void>; unsubscribe(): void } {
  const arrived: string[] = [];
  const unsubscribe = app.background.onDelivery((d) => arrived.push(`${style.dim(`[${d.source} ${d.jobId} · ${d.at.slice(11, 16)} UTC · session ${d.sessionId}]`)}\n${d.text}`));
  let breakerShown: string | undefined;
  return {
    async show() {
      for (const text of arrived.splice(0)) renderer.line(text);
      const notice = await breakerNotice(app).catch(() => undefined);
      if (notice !== breakerShown) {
        if (notice) renderer.line(style.red(notice));
        else if (breakerShown) renderer.line(style.dim('circuit breaker reset: autonomous trades run again.'));
        breakerShown = notice;
      }
    },
    unsubscribe,
  };
}
