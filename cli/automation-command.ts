/**
 * Workflows and price alerts, shared by the REPL (`/workflows`, `/alerts`) and the CLI (`minara workflows …`,
 * `minara alerts …`): list workflows (and the files that did not load, with their line), their stored runs, one run
 * step by step, start one by hand; list the user's alerts and cancel one.
 */
import type { AlertRecord, MinaraApp, WorkflowRunRecord } from '@minara/agent';
import type { CliOptions } from './app';
import { compactJson, truncate } from './render';

/** What a verb printed, and whether it was used correctly (false → exit code 2 in the CLI). */
export interface AutomationOutput {
  readonly text: string;
  readonly ok: boolean;
}

export const WORKFLOWS_USAGE = 'workflows [list] | runs [<workflow>] | run <run-id> | start <workflow>';
export const ALERTS_USAGE = 'alerts [list [all]] | cancel <id>';

const usage = (text: string): AutomationOutput => ({ text: `usage: ${text}`, ok: false });
const done = (text: string): AutomationOutput => ({ text, ok: true });

function runLine(r: WorkflowRunRecord): string {
  const took = r.durationMs === undefined ? '' : ` ${r.durationMs < 1000 ? `${Math.round(r.durationMs)}ms` : `${(r.durationMs / 1000).toFixed(1)}s`}`;
  return `  ${r.id.padEnd(22)} ${r.workflowId.padEnd(20)} ${r.status.padEnd(11)} ${r.trigger.padEnd(8)} ${r.startedAt}${took}${r.error ? `\n      ${truncate(r.error, 110)}` : ''}`;
}

/** One run, step by step: input and output of each. */
export function formatWorkflowRun(r: WorkflowRunRecord): string {
  const lines = [
    `Run ${r.id} of ${r.workflowId}: ${r.status} (${r.trigger}, key ${truncate(r.triggerKey, 60)})`,
    `  user ${r.userId}  trace ${r.traceId}  started ${r.startedAt}${r.endedAt ? `  ended ${r.endedAt}` : ''}${r.durationMs !== undefined ? `  ${Math.round(r.durationMs)}ms` : ''}`,
  ];
  if (r.error) lines.push(`  error: ${r.error}`);
  r.steps.forEach((s, i) => {
    lines.push(`  ${i + 1}. ${s.id} ${s.kind === 'tool_call' ? s.tool : '(model turn)'}: ${s.ok ? 'ok' : `failed${s.code ? ` ${s.code}` : ''}`}${s.decision ? ` [${s.decision}]` : ''} ${Math.round(s.durationMs)}ms`);
    lines.push(`     in:  ${compactJson(s.input, 110)}`);
    if (s.output !== undefined) lines.push(`     out: ${compactJson(s.output, 110)}`);
    if (!s.ok && s.error) lines.push(`     why: ${truncate(s.error, 110)}`);
  });
  for (const id of r.skipped) lines.push(`  -  ${id}: not run (an earlier step failed)`);
  return lines.join('\n');
}

/** `workflows …` on an app. */
export async function workflowsCommand(app: MinaraApp, words: readonly string[]): Promise<AutomationOutput> {
  const [verb = 'list', arg, ...rest] = words;
  if (rest.length > 0) return usage(WORKFLOWS_USAGE);
  const wf = app.workflows;
  if (verb === 'list') {
    if (arg !== undefined) return usage(WORKFLOWS_USAGE);
    const list = await wf.list();
    const issues = await wf.issues();
    const lines = [`Workflows: ${list.length}`];
    for (const w of list) {
      lines.push(`  ${w.id.padEnd(20)} ${(w.file ?? 'code').padEnd(32)} ${w.steps} step${w.steps === 1 ? '' : 's'}${w.modelSteps ? ` (${w.modelSteps} model turn${w.modelSteps === 1 ? '' : 's'})` : ', no model'}  user ${w.userId}`);
      if (w.description) lines.push(`      ${truncate(w.description, 100)}`);
    }
    for (const i of issues) lines.push(`  ! ${i.file}:${i.line}: ${i.path === '(file)' ? '' : `${i.path}: `}${i.message}`);
    if (list.length === 0 && issues.length === 0) lines.push('  none yet: add <workspace>/workflows/<name>.yaml (docs/autonomy.md#workflows)');
    lines.push('Run one on a schedule with a HEARTBEAT.md ## Schedule line: "- every 1h: workflow <name>".');
    return done(lines.join('\n'));
  }
  if (verb === 'runs') {
    const runs = await wf.runs({ ...(arg ? { workflowId: arg } : {}), limit: 20 });
    if (runs.length === 0) return done(`No workflow runs${arg ? ` of ${arg}` : ''} yet.`);
    return done([`Workflow runs${arg ? ` of ${arg}` : ''} (newest first, every process on this storage):`, ...runs.map(runLine), 'Details: workflows run <run-id>'].join('\n'));
  }
  if (verb === 'run') {
    if (!arg) return usage(WORKFLOWS_USAGE);
    const run = await wf.getRun(arg);
    return run ? done(formatWorkflowRun(run)) : { text: `No workflow run "${arg}".`, ok: false };
  }
  if (verb === 'start') {
    if (!arg) return usage(WORKFLOWS_USAGE);
    if (!(await wf.get(arg))) return { text: `No workflow named "${arg}" (${(await wf.list()).map((w) => w.id).join(', ') || 'none defined'}).`, ok: false };
    const run = await wf.trigger(arg, { trigger: 'manual' });
    return run ? done(formatWorkflowRun(run)) : { text: 'That run was already started.', ok: false };
  }
  return usage(WORKFLOWS_USAGE);
}

/** One alert as a line. */
export function alertLine(a: AlertRecord): string {
  const what = a.condition === 'move_pct' ? `moves ${a.threshold}% from ${a.basePrice}` : `${a.condition} ${a.threshold}`;
  const state = a.status === 'fired' ? `fired ${a.endedAt ?? ''} at ${a.firedPrice ?? '?'}` : a.status === 'active' ? `active until ${a.expiresAt}` : `${a.status} ${a.endedAt ?? ''}`;
  return `  #${String(a.id).padEnd(5)} ${a.asset.padEnd(8)} ${what.padEnd(26)} ${state}${a.note ? `  (${truncate(a.note, 60)})` : ''}`;
}

/** `alerts …` on an app, for its user. */
export async function alertsCommand(app: MinaraApp, words: readonly string[]): Promise<AutomationOutput> {
  const [verb = 'list', arg, ...rest] = words;
  if (rest.length > 0) return usage(ALERTS_USAGE);
  const userId = app.runtime.options.defaultUserId ?? 'default';
  if (verb === 'list') {
    if (arg !== undefined && arg !== 'all') return usage(ALERTS_USAGE);
    const list = await app.storage.alerts.list({ userId, ...(arg === 'all' ? {} : { status: 'active' }), limit: 100 });
    if (list.length === 0) return done(arg === 'all' ? 'No alerts.' : 'No active alerts. Ask the agent: "tell me when ETH drops below 3,000".');
    return done([`${arg === 'all' ? 'Alerts' : 'Active alerts'} of ${userId}:`, ...list.map(alertLine), 'Cancel with: alerts cancel <id>'].join('\n'));
  }
  if (verb === 'cancel') {
    const id = arg !== undefined && /^[1-9]\d{0,14}$/.test(arg) ? Number(arg) : undefined;
    if (id === undefined) return usage(ALERTS_USAGE);
    const cancelled = await app.storage.alerts.transition(userId, id, 'cancelled', { endedAt: new Date().toISOString() });
    if (cancelled) return done(`Cancelled alert #${id}: ${alertLine(cancelled).trim()}`);
    const existing = await app.storage.alerts.get(userId, id);
    return { text: existing ? `Alert #${id} is already ${existing.status}.` : `No alert #${id}.`, ok: false };
  }
  return usage(ALERTS_USAGE);
}

/** `minara workflows …` / `minara alerts …`: build the app, run the verb, print. */
export async function runAutomationCli(cli: CliOptions, command: 'workflows' | 'alerts', words: readonly string[], io: { write?: (s: string) => void; writeErr?: (s: string) => void } = {}): Promise<number> {
  const write = io.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = io.writeErr ?? ((s: string) => process.stderr.write(s));
  const { buildApp } = await import('./app');
  const app = await buildApp(cli, { surface: 'cli', mcp: false });
  try {
    const out = command === 'workflows' ? await workflowsCommand(app, words) : await alertsCommand(app, words);
    if (out.ok) write(`${out.text}\n`);
    else writeErr(`minara: ${out.text.startsWith('usage: ') ? `usage: minara ${out.text.slice(7)}` : out.text}\n`);
    return out.ok ? 0 : out.text.startsWith('usage: ') ? 2 : 1;
  } finally {
    await app.close();
  }
}
