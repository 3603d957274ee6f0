/**
 * Workflows written as YAML files in the workspace (`workflows/<name>.yaml`): parsed with the `yaml` package's
 * document API, so every problem names the file and the line of the offending node. A parsed file is a
 * {@link WorkflowSpec} (plain data); {@link workflowFromSpec} turns it into a {@link WorkflowDefinition} whose
 * `{{ … }}` templates read earlier steps' results and the trigger's input.
 */
import type { Document, Node as YamlNode } from 'yaml';
import { MinaraError } from '../errors/minara-error';
import type { ToolRegistry } from '../tools/types';
import { yaml } from '../util/lazy-yaml';
import { closestMatches } from '../util/suggest';
import type { WorkflowDefinition, WorkflowResults, WorkflowStep, WorkflowStepResult } from './workflows';

/** A workflow's name: its file name without `.yaml`, and its id. */
export const WORKFLOW_NAME = /^[a-z0-9][a-z0-9_-]{0,47}$/;
const STEP_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const TOP_KEYS = ['description', 'user', 'tool_sets', 'stop_on_error', 'steps'] as const;
const STEP_KEYS = ['id', 'tool', 'args', 'message'] as const;
const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const REFERENCE = /^(steps|input)((?:\.[A-Za-z0-9_-]+)*)$/;

/** One problem in a workflow file, with where it is. */
export interface WorkflowFileIssue {
  /** The file as given (e.g. `workflows/rebalance-check.yaml`). */
  readonly file: string;
  /** 1-based line of the offending node. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
  /** The field (`steps[1].tool`), or `(file)` for a YAML syntax error. */
  readonly path: string;
  readonly message: string;
}

/** One step of a workflow file. */
export interface WorkflowSpecStep {
  readonly id: string;
  readonly kind: 'tool_call' | 'agent_turn';
  readonly tool?: string | undefined;
  /** Arguments; strings may hold `{{ steps.<id>.<path> }}` and `{{ input.<path> }}`. */
  readonly args?: Readonly<Record<string, unknown>> | undefined;
  /** The message of an `agent_turn` step (a model turn); may hold templates. */
  readonly message?: string | undefined;
}

/** A workflow as written in a file (plain data; see {@link workflowFromSpec}). */
export interface WorkflowSpec {
  readonly id: string;
  readonly description?: string | undefined;
  /** The tenant it runs for. @default the app's user */
  readonly userId?: string | undefined;
  readonly allowedToolSets?: readonly string[] | undefined;
  readonly stopOnError: boolean;
  readonly steps: readonly WorkflowSpecStep[];
  /** Where it was read from. */
  readonly file?: string | undefined;
}

/** Options of {@link parseWorkflowFile}. */
export interface ParseWorkflowFileOptions {
  /** The file name used in issues, e.g. `workflows/rebalance-check.yaml`. */
  readonly file: string;
  /** The workflow id. @default the file name without its folder and `.yaml`/`.yml` */
  readonly id?: string | undefined;
  /** Check tool names against this registry (with close matches). */
  readonly tools?: Pick<ToolRegistry, 'has' | 'list'> | undefined;
}

const describe = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : JSON.stringify(v));

/**
 * Parse and check one workflow file. Every problem is an issue with the file, line and field; a file with any
 * issue has no `workflow`.
 *
 * ```yaml
 * description: Buy $50 of ETH when it dips below 3,000
 * tool_sets: [read, trade]        # optional: the tool sets its steps may use
 * steps:
 *   - id: eth
 *     tool: get_price
 *     args: { symbol: ETH }
 *   - id: buy
 *     tool: swap_tokens
 *     args: { from: USDC, to: ETH, amountUsd: 50, confirm: true }
 * ```
 */
export function parseWorkflowFile(text: string, options: ParseWorkflowFileOptions): { readonly workflow?: WorkflowSpec | undefined; readonly issues: readonly WorkflowFileIssue[] } {
  const { file } = options;
  const id = options.id ?? file.replace(/^.*[\\/]/, '').replace(/\.ya?ml$/i, '');
  const Y = yaml();
  const lines = new Y.LineCounter();
  const doc = Y.parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true, schema: 'core' }) as Document.Parsed;
  const issues: WorkflowFileIssue[] = [];
  const at = (offset: number | undefined, path: string, message: string) => {
    const pos = lines.linePos(offset ?? 0);
    issues.push({ file, line: pos.line, column: pos.col, path, message });
  };
  // Errors, and warnings too (an unknown tag such as `!!js/function` would otherwise be read as a plain string).
  for (const e of [...doc.errors, ...doc.warnings]) {
    const pos = e.linePos?.[0];
    issues.push({ file, line: pos?.line ?? 1, column: pos?.col ?? 1, path: '(file)', message: (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '') });
  }
  if (issues.length > 0) return { issues };
  if (!WORKFLOW_NAME.test(id)) at(0, '(name)', `the workflow name "${id}" (the file name) must be 1–48 of a-z, 0-9, "_" or "-"`);

  const { keyOffset, label, fail } = createLocator(Y, doc, at);

  let root: unknown;
  try {
    // Aliases are refused outright: a workflow never needs them, and they are how a small file expands into a huge one.
    root = doc.toJS({ maxAliasCount: 0 });
  } catch {
    let offset = 0;
    Y.visit(doc, {
      Alias(_key, node) {
        offset = node.range?.[0] ?? 0;
        return Y.visit.BREAK;
      },
    });
    at(offset, '(file)', 'YAML anchors and aliases are not allowed in a workflow');
    return { issues };
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) {
    at(0, '(file)', `expected a mapping with "steps" (and optionally ${TOP_KEYS.filter((k) => k !== 'steps').join(', ')}), got ${describe(root)}`);
    return { issues };
  }
  const top = root as Record<string, unknown>;
  for (const key of Object.keys(top)) {
    if (!(TOP_KEYS as readonly string[]).includes(key)) at(keyOffset([], key), key, `unknown field (expected ${TOP_KEYS.join(', ')})`);
  }
  const description = top['description'];
  if (description !== undefined && (typeof description !== 'string' || description.length > 300)) fail(['description'], 'expected a string of at most 300 characters');
  const user = top['user'];
  if (user !== undefined && (typeof user !== 'string' || !/^[A-Za-z0-9._:@-]{1,128}$/.test(user))) fail(['user'], 'expected a user id (1–128 letters, digits, ".", "_", ":", "@" or "-")');
  const sets = top['tool_sets'];
  if (sets !== undefined && (!Array.isArray(sets) || sets.length === 0 || sets.some((s) => typeof s !== 'string' || s === ''))) fail(['tool_sets'], 'expected a non-empty list of tool-set names, e.g. [read, trade]');
  const stop = top['stop_on_error'];
  if (stop !== undefined && typeof stop !== 'boolean') fail(['stop_on_error'], `expected true or false, got ${describe(stop)}`);

  const steps: WorkflowSpecStep[] = [];
  const rawSteps = top['steps'];
  if (!Array.isArray(rawSteps) || rawSteps.length === 0) fail(['steps'], rawSteps === undefined ? 'missing: a workflow needs a list of steps' : `expected a non-empty list of steps, got ${describe(rawSteps)}`);
  else {
    steps.push(...checkSteps(rawSteps, { tools: options.tools, issues, at, keyOffset, label, fail }));
  }
  if (issues.length > 0) return { issues };
  return {
    issues,
    workflow: {
      id,
      ...(typeof description === 'string' ? { description } : {}),
      ...(typeof user === 'string' ? { userId: user } : {}),
      ...(Array.isArray(sets) ? { allowedToolSets: sets as string[] } : {}),
      stopOnError: stop !== false,
      steps,
      file,
    },
  };
}

/** Check every `{{ … }}` in a value: a reference to an earlier step or to the input. */
function checkTemplates(value: unknown, path: ReadonlyArray<string | number>, earlier: ReadonlySet<string>, fail: (path: ReadonlyArray<string | number>, message: string) => void): void {
  if (typeof value === 'string') {
    for (const m of value.matchAll(TEMPLATE)) {
      const ref = parseReference(m[1] ?? '', earlier);
      if (typeof ref === 'string') fail(path, `{{ ${m[1]} }}: ${ref}`);
    }
  } else if (Array.isArray(value)) value.forEach((v, i) => checkTemplates(v, [...path, i], earlier, fail));
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) checkTemplates(v, [...path, k], earlier, fail);
}

/** A template reference, or why it is not one. */
function parseReference(text: string, steps: ReadonlySet<string>): { root: 'input' | string; path: string[] } | string {
  const m = REFERENCE.exec(text.trim());
  if (!m) return 'expected steps.<id>.<path> or input.<path>';
  const path = (m[2] ?? '').split('.').filter((p) => p !== '');
  if (m[1] === 'input') return { root: 'input', path };
  if (path.length === 0) return 'expected steps.<id>.<path>, e.g. steps.eth.data.priceUsd';
  // The step id is the longest prefix of known ids (ids may hold dots).
  const rest = path;
  for (let n = rest.length; n >= 1; n--) {
    const id = rest.slice(0, n).join('.');
    if (steps.has(id)) return { root: id, path: rest.slice(n) };
  }
  return `no earlier step "${rest[0]}" (a template reads steps above it${steps.size ? `: ${[...steps].join(', ')}` : ''})`;
}

/** What a template sees of a step: the tool's envelope (`ok`, `data`, `error`, `code`), or a turn's `ok`, `text`, `stopReason`. */
function stepView(r: WorkflowStepResult): Record<string, unknown> {
  if (r.kind === 'agent_turn') return { ok: r.ok, text: r.text ?? '', stopReason: r.decision };
  return { ...(r.envelope as unknown as Record<string, unknown>), ...(r.error !== undefined ? { error: r.error } : {}) };
}

function resolve(text: string, results: WorkflowResults, input: unknown, ids: ReadonlySet<string>): unknown {
  const ref = parseReference(text, ids);
  if (typeof ref === 'string') throw new MinaraError('WORKFLOW_INVALID', `{{ ${text} }}: ${ref}`);
  let value: unknown;
  if (ref.root === 'input') value = input;
  else {
    const r = results[ref.root];
    if (!r) throw new MinaraError('WORKFLOW_INVALID', `{{ ${text} }}: step "${ref.root}" has not run`);
    value = stepView(r);
  }
  for (const seg of ref.path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, seg)) throw new MinaraError('WORKFLOW_INVALID', `{{ ${text} }}: no value at "${seg}"`);
    value = (value as Record<string, unknown>)[seg];
  }
  return value;
}

/** A value with its templates filled: a string that is one template keeps the value's type; others become text. */
function fill(value: unknown, results: WorkflowResults, input: unknown, ids: ReadonlySet<string>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([^{}]*?)\s*\}\}$/.exec(value);
    if (whole) return resolve(whole[1] ?? '', results, input, ids);
    return value.replace(TEMPLATE, (_, ref: string) => {
      const v = resolve(ref, results, input, ids);
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, results, input, ids));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, results, input, ids)]));
  return value;
}

const hasTemplate = (value: unknown): boolean =>
  typeof value === 'string' ? /\{\{[^{}]*\}\}/.test(value) : Array.isArray(value) ? value.some(hasTemplate) : typeof value === 'object' && value !== null ? Object.values(value).some(hasTemplate) : false;

/**
 * The runnable {@link WorkflowDefinition} of a spec: `{{ steps.<id>.<path> }}` reads an earlier step (a tool's
 * envelope: `ok`, `data.…`, `error`, `code`; a turn's `text`), `{{ input.<path> }}` the trigger's input (a
 * webhook's `input` object). A reference that does not resolve fails its step.
 */
export function workflowFromSpec(spec: WorkflowSpec, options: { readonly input?: unknown; readonly userId?: string | undefined } = {}): WorkflowDefinition {
  const input = options.input ?? {};
  const ids = new Set(spec.steps.map((s) => s.id));
  const steps: WorkflowStep[] = spec.steps.map((s): WorkflowStep => {
    if (s.kind === 'agent_turn') {
      const message = s.message ?? '';
      return { id: s.id, kind: 'agent_turn', message: hasTemplate(message) ? (r: WorkflowResults) => String(fill(message, r, input, ids)) : message };
    }
    const args = s.args ?? {};
    return { id: s.id, kind: 'tool_call', tool: s.tool ?? '', args: hasTemplate(args) ? (r: WorkflowResults) => fill(args, r, input, ids) : args };
  });
  const userId = spec.userId ?? options.userId;
  return {
    id: spec.id,
    steps,
    stopOnError: spec.stopOnError,
    ...(userId !== undefined ? { userId } : {}),
    ...(spec.allowedToolSets ? { allowedToolSets: spec.allowedToolSets } : {}),
  };
}

/** Issues as one message per line (`workflows/x.yaml:7: steps[1].tool: …`). */
export function formatWorkflowIssues(issues: readonly WorkflowFileIssue[]): string {
  return issues.map((i) => `${i.file}:${i.line}: ${i.path === '(file)' ? '' : `${i.path}: `}${i.message}`).join('\n');
}

/** A path in the document. */
type DocPath = ReadonlyArray<string | number>;

/** Where paths of a parsed workflow document are (line and column for issues), and `fail` to report one. */
function createLocator(Y: ReturnType<typeof yaml>, doc: Document.Parsed, at: (offset: number | undefined, path: string, message: string) => void) {
  const nodeAt = (path: DocPath): YamlNode | undefined => {
    const n = doc.getIn(path, true) as unknown;
    return Y.isNode(n) ? n : undefined;
  };
  /** Where a path points: its node, else the closest parent that exists. */
  const offsetOf = (path: DocPath): number | undefined => {
    for (let n = path.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents ?? undefined : nodeAt(path.slice(0, n));
      if (node?.range) return node.range[0];
    }
    return 0;
  };
  /** The offset of a mapping's key (for unknown keys). */
  const keyOffset = (path: DocPath, key: string): number | undefined => {
    const map = path.length === 0 ? doc.contents : nodeAt(path);
    if (Y.isMap(map)) {
      for (const pair of map.items) if (Y.isScalar(pair.key) && pair.key.value === key) return pair.key.range?.[0];
    }
    return offsetOf(path);
  };
  const label = (path: DocPath) => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
  const fail = (path: DocPath, message: string) => at(offsetOf(path), label(path), message);
  return { keyOffset, label, fail };
}

/** What {@link checkSteps} reports with. */
interface StepChecks {
  readonly tools: ParseWorkflowFileOptions['tools'];
  readonly issues: readonly WorkflowFileIssue[];
  readonly at: (offset: number | undefined, path: string, message: string) => void;
  readonly keyOffset: (path: DocPath, key: string) => number | undefined;
  readonly label: (path: DocPath) => string;
  readonly fail: (path: DocPath, message: string) => void;
}

/** Check each step (keys, id, tool or message, args and their templates); the steps without an issue. */
function checkSteps(rawSteps: readonly unknown[], checks: StepChecks): WorkflowSpecStep[] {
  const { tools, issues, at, keyOffset, label, fail } = checks;
  const steps: WorkflowSpecStep[] = [];
  const seen = new Set<string>();
  rawSteps.forEach((raw: unknown, i) => {
    const path = ['steps', i];
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail(path, `expected a mapping with id and tool (or message), got ${describe(raw)}`);
    const s = raw as Record<string, unknown>;
    const before = issues.length;
    for (const key of Object.keys(s)) if (!(STEP_KEYS as readonly string[]).includes(key)) at(keyOffset(path, key), `${label(path)}.${key}`, `unknown field (expected ${STEP_KEYS.join(', ')})`);
    const stepId = s['id'];
    if (typeof stepId !== 'string' || !STEP_ID.test(stepId)) fail([...path, 'id'], stepId === undefined ? 'missing: every step needs an id' : 'expected 1–64 letters, digits, ".", "_" or "-"');
    else if (seen.has(stepId)) fail([...path, 'id'], `duplicate step id "${stepId}"`);
    const tool = s['tool'];
    const message = s['message'];
    if ((tool === undefined) === (message === undefined)) {
      fail(path, 'give exactly one of "tool" (a tool call, no model) or "message" (a model turn)');
    } else if (tool !== undefined) {
      if (typeof tool !== 'string' || tool === '') fail([...path, 'tool'], 'expected a tool name');
      else if (tools && !tools.has(tool)) {
        const near = closestMatches(tool, tools.list().map((t) => t.name));
        fail([...path, 'tool'], `no registered tool named "${tool}"${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`);
      }
      const args = s['args'];
      if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) fail([...path, 'args'], `expected a mapping of arguments, got ${describe(args)}`);
      else if (args !== undefined) checkTemplates(args, [...path, 'args'], seen, fail);
    } else {
      if (typeof message !== 'string' || message.trim() === '' || message.length > 20_000) fail([...path, 'message'], 'expected a message of 1–20000 characters');
      else checkTemplates(message, [...path, 'message'], seen, fail);
    }
    if (typeof stepId === 'string') seen.add(stepId);
    if (issues.length > before) return;
    steps.push(
      tool !== undefined
        ? { id: stepId as string, kind: 'tool_call', tool: tool as string, ...(s['args'] !== undefined ? { args: s['args'] as Record<string, unknown> } : {}) }
        : { id: stepId as string, kind: 'agent_turn', message: message as string },
    );
  });
  return steps;
}
