/**
 * Workflows that run by themselves: the host's workflows (code) and the workspace's (`workflows/<name>.yaml`),
 * triggered by a HEARTBEAT.md `## Schedule` entry (`- every 1h: workflow rebalance-check`), a signed webhook, or by
 * hand, with no model turn unless a step asks for one. Every run is stored (see `startStoredWorkflow`).
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
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
  const code = new Map<string, Entry>();
  for (const [i, def] of (options.workflows ?? []).entries()) {
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

  let files = new Map<string, Entry>();
  let fileIssues: WorkflowFileIssue[] = [];
  let stamp = '';
  let lastRead = Number.NEGATIVE_INFINITY;
  const logged = new Set<string>();

  function readFolder(): void {
    if (dir === undefined) return;
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => /\.ya?ml$/i.test(n)).sort();
    } catch {
      names = [];
    }
    const stats = names.map((n) => {
      try {
        return { n, s: lstatSync(path.join(dir, n)) };
      } catch {
        return { n, s: undefined };
      }
    });
    const nextStamp = stats.map(({ n, s }) => `${n}:${s?.mtimeMs ?? 0}:${s?.size ?? 0}`).join('|');
    if (nextStamp === stamp) return;
    stamp = nextStamp;
    const next = new Map<string, Entry>();
    const issues: WorkflowFileIssue[] = [];
    for (const { n, s } of stats) {
      const file = `workflows/${n}`;
      const issue = (message: string) => issues.push({ file, line: 1, column: 1, path: '(file)', message });
      // Only regular files inside the folder: a symlink could point anywhere on the machine.
      if (!s?.isFile()) {
        issue(s?.isSymbolicLink() ? 'a symbolic link; workflow files must be regular files in the folder' : 'not a regular file');
        continue;
      }
      if (s.size > MAX_FILE_BYTES) {
        issue(`larger than ${MAX_FILE_BYTES / 1024} KiB`);
        continue;
      }
      const parsed = parseWorkflowFile(readFileSync(path.join(dir, n), 'utf8'), { file, tools });
      if (!parsed.workflow) {
        issues.push(...parsed.issues);
        continue;
      }
      const spec: WorkflowSpec = parsed.workflow;
      if (code.has(spec.id)) {
        issue(`a workflow named "${spec.id}" is defined in code; this file is ignored`);
        continue;
      }
      if (next.has(spec.id)) {
        issue(`a second file for the workflow "${spec.id}" (.yaml and .yml); this one is ignored`);
        continue;
      }
      next.set(spec.id, {
        info: {
          id: spec.id, ...(spec.description !== undefined ? { description: spec.description } : {}), source: 'workspace', file, userId: spec.userId ?? userId,
          steps: spec.steps.length, modelSteps: spec.steps.filter((x) => x.kind === 'agent_turn').length, tools: spec.steps.flatMap((x) => (x.tool ? [x.tool] : [])),
        },
        build: (input) => workflowFromSpec(spec, { input }),
      });
    }
    for (const i of issues) {
      const key = `${stamp}:${i.file}:${i.line}:${i.message}`;
      if (logged.has(key)) continue;
      logged.add(key);
      logger.warn(`workflow file ignored: ${formatWorkflowIssues([i])}`, { module: 'workflows' });
    }
    files = next;
    fileIssues = issues;
  }

  function refresh(force = false): void {
    const t = now().getTime();
    if (!force && t - lastRead < REFRESH_MS) return;
    lastRead = t;
    readFolder();
  }

  const all = (): Entry[] => [...code.values(), ...files.values()];
  let lastExpire = Number.NEGATIVE_INFINITY;
  async function expire(): Promise<void> {
    const t = now().getTime();
    if (t - lastExpire < EXPIRE_MS) return;
    lastExpire = t;
    await storage.workflows.expireRuns(new Date(t).toISOString());
  }
  const find = (id: string): Entry | undefined => code.get(id) ?? files.get(id);

  async function start(id: string, trigger: WorkflowTriggerOptions = {}): Promise<StartedWorkflowRun | undefined> {
    refresh();
    let entry = find(id);
    if (!entry) {
      refresh(true);
      entry = find(id);
    }
    if (!entry) {
      const known = all().map((e) => e.info.id);
      throw new MinaraError('NOT_FOUND', `No workflow named "${id}"${known.length ? ` (workflows: ${known.join(', ')})` : ' (none defined: add workflows/<name>.yaml to the workspace)'}.`);
    }
    await expire();
    return startStoredWorkflow({
      runtime,
      storage,
      definition: entry.build(trigger.input),
      trigger: trigger.trigger ?? 'manual',
      triggerKey: trigger.key ?? `manual:${generateId('key')}`,
      userId: trigger.userId ?? entry.info.userId,
      owner,
      leaseMs,
      ...(trigger.signal ? { signal: trigger.signal } : {}),
      now,
      generateId,
    });
  }

  return {
    async list() {
      refresh();
      return all().map((e) => e.info);
    },
    async issues() {
      refresh();
      return [...fileIssues];
    },
    async get(id) {
      refresh();
      return find(id)?.info;
    },
    start,
    async trigger(id, trigger) {
      const started = await start(id, trigger);
      return started ? started.done : undefined;
    },
    async runs(query = {}) {
      await expire();
      return storage.workflows.listRuns(query);
    },
    async getRun(id) {
      await expire();
      return storage.workflows.getRun(id);
    },
  };
}
