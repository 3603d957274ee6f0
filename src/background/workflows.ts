/**
 * Workflows that run by themselves: the host's workflows (code) and the workspace's (`workflows/<name>.yaml`),
 * triggered by a HEARTBEAT.md `## Schedule` entry (`- every 1h: workflow rebalance-check`), a signed webhook, or by
 * hand, with no model turn unless a step asks for one. Every run is stored (see `startStoredWorkflow`).
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, type Stats } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { MinaraError } from '../errors/minara-error';
import type { AgentRuntime } from '../runtime/runtime';
import { formatWorkflowIssues, parseWorkflowFile, WORKFLOW_NAME, type WorkflowFileIssue, type WorkflowSpec, workflowFromSpec } from '../runtime/workflow-file';
import { type StartedWorkflowRun, startStoredWorkflow } from '../runtime/workflow-runs';
import { validateWorkflow, type WorkflowDefinition } from '../runtime/workflows';
import type { WorkflowRunQuery, WorkflowRunRecord, WorkflowTrigger } from '../storage/automation-types';
import type { Storage } from '../storage/types';
import type { ToolRegistry } from '../tools/types';
import { generateId as defaultGenerateId } from '../util/ids';
import { type Logger, silentLogger } from '../util/logger';

/** Options of {@link createWorkflowAutomation}. */
export interface WorkflowAutomationOptions {
  readonly runtime: Pick<AgentRuntime, 'runWorkflow'>;
  /** Where runs are stored and claimed (shared by every process of the fleet). */
  readonly storage: Storage;
  /** The registry the steps run through; tool names are checked against it. */
  readonly tools: ToolRegistry;
  /** Workflows defined in code. Their ids must be workflow names (`a-z0-9_-`); a file with the same name is ignored. */
  readonly workflows?: readonly WorkflowDefinition[] | undefined;
  /** The folder of YAML workflows (`<workspace>/workflows`); read again when its files change. @default none */
  readonly dir?: string | undefined;
  /** The tenant a workflow runs for when neither it nor the trigger names one. @default 'default' */
  readonly userId?: string | undefined;
  /** How long one run may take. @default 600000 (10 minutes) */
  readonly leaseMs?: number | undefined;
  readonly owner?: string | undefined;
  readonly now?: (() => Date) | undefined;
  readonly generateId?: ((prefix: string) => string) | undefined;
  readonly logger?: Logger | undefined;
}

/** One workflow as listed. */
export interface WorkflowInfo {
  readonly id: string;
  readonly description?: string | undefined;
  readonly source: 'code' | 'workspace';
  /** The file of a workspace workflow (`workflows/<name>.yaml`). */
  readonly file?: string | undefined;
  /** The tenant it runs for. */
  readonly userId: string;
  readonly steps: number;
  /** Steps that are model turns (0: the workflow never calls a model). */
  readonly modelSteps: number;
  /** The tools its steps call, in order. */
  readonly tools: readonly string[];
}

/** How a run is started. */
export interface WorkflowTriggerOptions {
  /** @default 'manual' */
  readonly trigger?: WorkflowTrigger | undefined;
  /** Unique per workflow across the fleet: a second start with the same key runs nothing. @default a fresh id */
  readonly key?: string | undefined;
  /** The tenant. @default the workflow's user, else the automation's */
  readonly userId?: string | undefined;
  /** What `{{ input.<path> }}` templates read (a webhook's `input`). */
  readonly input?: unknown;
  readonly signal?: AbortSignal | undefined;
}

/** The workflows of an app and their stored runs. */
export interface WorkflowAutomation {
  /** Every workflow (code first, then files by name), reading the folder again when it changed. */
  list(): Promise<WorkflowInfo[]>;
  /** Problems of the workflow files, each with file and line (such a file is not loaded). */
  issues(): Promise<WorkflowFileIssue[]>;
  get(id: string): Promise<WorkflowInfo | undefined>;
  /**
   * Claim a run for the trigger key and start it: `undefined` when the key already has a run (another process, or
   * before). Throws `NOT_FOUND` for an unknown workflow.
   */
  start(id: string, options?: WorkflowTriggerOptions): Promise<StartedWorkflowRun | undefined>;
  /** {@link start}, then wait for the run to end. */
  trigger(id: string, options?: WorkflowTriggerOptions): Promise<WorkflowRunRecord | undefined>;
  /** Stored runs, newest first (runs whose process died are marked `interrupted` first, at most every 30 s). */
  runs(query?: WorkflowRunQuery): Promise<WorkflowRunRecord[]>;
  getRun(id: string): Promise<WorkflowRunRecord | undefined>;
}

const REFRESH_MS = 2_000;
/** How often runs whose process died are looked for (a read of the stored runs, or a start, triggers it). */
const EXPIRE_MS = 30_000;
const MAX_FILE_BYTES = 64 * 1024;

interface Entry {
  readonly info: WorkflowInfo;
  readonly build: (input: unknown) => WorkflowDefinition;
}

/** What one workflow automation keeps: its settings, the code workflows and the last read of the folder. */
interface AutomationState {
  runtime: Pick<AgentRuntime, 'runWorkflow'>;
  storage: Storage;
  tools: ToolRegistry;
  dir: string | undefined;
  userId: string;
  leaseMs: number;
  now: () => Date;
  generateId: (prefix: string) => string;
  logger: Logger;
  owner: string;
  code: Map<string, Entry>;
  files: Map<string, Entry>;
  fileIssues: WorkflowFileIssue[];
  /** Names, times and sizes of the folder's files at the last read: the folder is parsed again when it changes. */
  stamp: string;
  lastRead: number;
  lastExpire: number;
  /** Issues already logged (each once per folder state). */
  logged: Set<string>;
}

/** The code workflows, checked, by id. */
function codeEntries(defs: readonly WorkflowDefinition[], tools: ToolRegistry, userId: string): Map<string, Entry> {
  const code = new Map<string, Entry>();
  for (const [i, def] of defs.entries()) {
    if (typeof def?.id !== 'string' || !WORKFLOW_NAME.test(def.id)) {
      throw new MinaraError('CONFIG_INVALID', `workflows[${i}].id must be a workflow name (1–48 of a-z, 0-9, "_" or "-"), got ${JSON.stringify(def?.id)}`);
    }
    if (code.has(def.id)) throw new MinaraError('CONFIG_INVALID', `workflows[${i}]: a second workflow named "${def.id}"`);
    validateWorkflow(def, tools);
    code.set(def.id, {
      info: {
        id: def.id, source: 'code', userId: def.userId ?? userId, steps: def.steps.length,
        modelSteps: def.steps.filter((s) => s.kind === 'agent_turn').length, tools: def.steps.flatMap((s) => (s.kind === 'tool_call' ? [s.tool] : [])),
      },
      build: () => def,
    });
  }
  return code;
}

type FileStat = { n: string; s: Stats | undefined };

/** The folder's YAML files, by name, each with its `lstat` (undefined when it vanished). */
function statFolder(dir: string): FileStat[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /\.ya?ml$/i.test(n)).sort();
  } catch {
    names = [];
  }
  return names.map((n) => {
    try {
      return { n, s: lstatSync(path.join(dir, n)) };
    } catch {
      return { n, s: undefined };
    }
  });
}

/** One file of the folder as an entry, or undefined after adding its issues to `issues`. */
function fileEntry(w: AutomationState, dir: string, { n, s }: FileStat, next: Map<string, Entry>, issues: WorkflowFileIssue[]): Entry | undefined {
  const file = `workflows/${n}`;
  const issue = (message: string) => {
    issues.push({ file, line: 1, column: 1, path: '(file)', message });
    return undefined;
  };
  // Only regular files inside the folder: a symlink could point anywhere on the machine.
  if (!s?.isFile()) return issue(s?.isSymbolicLink() ? 'a symbolic link; workflow files must be regular files in the folder' : 'not a regular file');
  if (s.size > MAX_FILE_BYTES) return issue(`larger than ${MAX_FILE_BYTES / 1024} KiB`);
  const parsed = parseWorkflowFile(readFileSync(path.join(dir, n), 'utf8'), { file, tools: w.tools });
  if (!parsed.workflow) {
    issues.push(...parsed.issues);
    return undefined;
  }
  const spec: WorkflowSpec = parsed.workflow;
  if (w.code.has(spec.id)) return issue(`a workflow named "${spec.id}" is defined in code; this file is ignored`);
  if (next.has(spec.id)) return issue(`a second file for the workflow "${spec.id}" (.yaml and .yml); this one is ignored`);
  return {
    info: {
      id: spec.id, ...(spec.description !== undefined ? { description: spec.description } : {}), source: 'workspace', file, userId: spec.userId ?? w.userId,
      steps: spec.steps.length, modelSteps: spec.steps.filter((x) => x.kind === 'agent_turn').length, tools: spec.steps.flatMap((x) => (x.tool ? [x.tool] : [])),
    },
    build: (input) => workflowFromSpec(spec, { input }),
  };
}

/** Read the folder again when it changed: its workflows and issues (each issue logged once). */
function readFolder(w: AutomationState): void {
  const { dir } = w;
  if (dir === undefined) return;
  const stats = statFolder(dir);
  const nextStamp = stats.map(({ n, s }) => `${n}:${s?.mtimeMs ?? 0}:${s?.size ?? 0}`).join('|');
  if (nextStamp === w.stamp) return;
  w.stamp = nextStamp;
  const next = new Map<string, Entry>();
  const issues: WorkflowFileIssue[] = [];
  for (const stat of stats) {
    const entry = fileEntry(w, dir, stat, next, issues);
    if (entry !== undefined) next.set(entry.info.id, entry);
  }
  for (const i of issues) {
    const key = `${w.stamp}:${i.file}:${i.line}:${i.message}`;
    if (w.logged.has(key)) continue;
    w.logged.add(key);
    w.logger.warn(`workflow file ignored: ${formatWorkflowIssues([i])}`, { module: 'workflows' });
  }
  w.files = next;
  w.fileIssues = issues;
}

function refresh(w: AutomationState, force = false): void {
  const t = w.now().getTime();
  if (!force && t - w.lastRead < REFRESH_MS) return;
  w.lastRead = t;
  readFolder(w);
}

const all = (w: AutomationState): Entry[] => [...w.code.values(), ...w.files.values()];
const find = (w: AutomationState, id: string): Entry | undefined => w.code.get(id) ?? w.files.get(id);

/** Mark the runs whose lease lapsed (at most every {@link EXPIRE_MS}). */
async function expire(w: AutomationState): Promise<void> {
  const t = w.now().getTime();
  if (t - w.lastExpire < EXPIRE_MS) return;
  w.lastExpire = t;
  await w.storage.workflows.expireRuns(new Date(t).toISOString());
}

async function start(w: AutomationState, id: string, trigger: WorkflowTriggerOptions = {}): Promise<StartedWorkflowRun | undefined> {
  refresh(w);
  let entry = find(w, id);
  if (!entry) {
    refresh(w, true);
    entry = find(w, id);
  }
  if (!entry) {
    const known = all(w).map((e) => e.info.id);
    throw new MinaraError('NOT_FOUND', `No workflow named "${id}"${known.length ? ` (workflows: ${known.join(', ')})` : ' (none defined: add workflows/<name>.yaml to the workspace)'}.`);
  }
  await expire(w);
  return startStoredWorkflow({
    runtime: w.runtime,
    storage: w.storage,
    definition: entry.build(trigger.input),
    trigger: trigger.trigger ?? 'manual',
    triggerKey: trigger.key ?? `manual:${w.generateId('key')}`,
    userId: trigger.userId ?? entry.info.userId,
    owner: w.owner,
    leaseMs: w.leaseMs,
    ...(trigger.signal ? { signal: trigger.signal } : {}),
    now: w.now,
    generateId: w.generateId,
  });
}

/**
 * The workflow automation of an app (`app.workflows`): lists the code and workspace workflows and starts stored
 * runs. A file that does not parse or check is skipped, logged once with its file and line, and listed by
 * {@link WorkflowAutomation.issues}; it never stops the others.
 *
 * @example
 * ```ts
 * const workflows = createWorkflowAutomation({ runtime, storage, tools, dir: path.join(workspace.dir, 'workflows') });
 * const run = await workflows.trigger('rebalance-check');
 * console.log(run?.status, run?.steps.map((s) => s.id));
 * ```
 */
export function createWorkflowAutomation(options: WorkflowAutomationOptions): WorkflowAutomation {
  const { runtime, storage, tools, dir, userId = 'default', leaseMs = 10 * 60_000, now = () => new Date(), generateId = defaultGenerateId, logger = silentLogger } = options;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const code = codeEntries(options.workflows ?? [], tools, userId);
  const w: AutomationState = {
    runtime, storage, tools, dir, userId, leaseMs, now, generateId, logger, owner, code,
    files: new Map(), fileIssues: [], stamp: '', lastRead: Number.NEGATIVE_INFINITY, lastExpire: Number.NEGATIVE_INFINITY, logged: new Set(),
  };
  return {
    async list() {
      refresh(w);
      return all(w).map((e) => e.info);
    },
    async issues() {
      refresh(w);
      return [...w.fileIssues];
    },
    async get(id) {
      refresh(w);
      return find(w, id)?.info;
    },
    start: (id, trigger) => start(w, id, trigger),
    async trigger(id, trigger) {
      const started = await start(w, id, trigger);
      return started ? started.done : undefined;
    },
    async runs(query = {}) {
      await expire(w);
      return w.storage.workflows.listRuns(query);
    },
    async getRun(id) {
      await expire(w);
      return w.storage.workflows.getRun(id);
    },
  };
}
