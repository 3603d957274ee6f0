/**
 * HEARTBEAT.md's `## Schedule` on the runner: reading it, keeping the runner's `schedule:*` jobs in step with its
 * entries (each a `cron` turn, or a stored workflow run), and telling the user once of each line it ignores.
 */
import { extractScheduleSection } from '../workspace/heartbeat';
import { admitted, type AgentBackgroundState, day, deliverTurn, EMPTY, LOG, traceOf } from './agent-state';
import type { BackgroundJob } from './runner-types';
import { type ParsedSchedule, parseSchedule } from './schedule';

type ScheduleEntry = ParsedSchedule['entries'][number];

/** The workspace's `## Schedule` as parsed (empty without a workspace, a HEARTBEAT.md or the section). */
async function readSchedule(a: AgentBackgroundState): Promise<ParsedSchedule> {
  if (!a.workspace) return EMPTY;
  const file = await a.workspace.readFile('HEARTBEAT.md');
  const section = file.exists ? extractScheduleSection(file.content) : undefined;
  return section === undefined ? EMPTY : parseSchedule(section);
}

/** Read HEARTBEAT.md again and add, change or remove the timed jobs; an unreadable file keeps the previous schedule. */
export async function syncSchedule(a: AgentBackgroundState): Promise<ParsedSchedule> {
  a.lastSync = a.now().getTime();
  let parsed: ParsedSchedule;
  try {
    parsed = await readSchedule(a);
  } catch (error) {
    a.logger.warn('background: could not read HEARTBEAT.md; keeping the previous schedule', { ...LOG, error: error instanceof Error ? error.message : String(error) });
    return a.current;
  }
  if (parsed.entries.some((e) => e.workflow !== undefined)) parsed = await checkWorkflows(a, parsed);
  for (const p of parsed.problems) {
    if (a.reported.has(p.line)) continue;
    a.reported.add(p.line);
    a.logger.warn(`HEARTBEAT.md ## Schedule: "${p.line}" is ignored: ${p.reason}`, LOG);
    a.unnoticed.push(`HEARTBEAT.md ## Schedule: the line "${p.line}" is ignored (${p.reason}). Tell the user once, and offer to fix the line.`);
  }
  const wanted = new Map(parsed.entries.map((e) => [e.id, e]));
  for (const job of a.runner.status()) if (job.id.startsWith('schedule:') && !wanted.has(job.id)) a.runner.remove(job.id);
  for (const entry of wanted.values()) if (!a.runner.has(entry.id)) a.runner.add(scheduleJob(a, entry));
  a.current = parsed;
  return parsed;
}

/** A `workflow <name>` entry needs the automation and a workflow of that name; otherwise the line is a problem. */
async function checkWorkflows(a: AgentBackgroundState, parsed: ParsedSchedule): Promise<ParsedSchedule> {
  const known = a.workflows ? new Set((await a.workflows.list()).map((w) => w.id)) : undefined;
  const entries = parsed.entries.filter((e) => e.workflow === undefined || known?.has(e.workflow));
  const problems = parsed.entries
    .filter((e) => !entries.includes(e))
    .map((e) => ({
      line: e.line,
      reason: known
        ? `no workflow named "${e.workflow}" (workflows: ${[...known].join(', ') || 'none; add workflows/<name>.yaml to the workspace'})`
        : 'workflows are not enabled in this app',
    }));
  return { entries, tasks: parsed.tasks, problems: [...parsed.problems, ...problems] };
}

/** The runner job of a schedule entry: a stored workflow run, or a `cron` turn with the entry's instruction. */
function scheduleJob(a: AgentBackgroundState, entry: ScheduleEntry): BackgroundJob {
  const timing = entry.every !== undefined ? { every: entry.every } : { cron: entry.cron!, ...(entry.timezone ? { timezone: entry.timezone } : {}) };
  const base = { id: entry.id, description: `HEARTBEAT.md: ${entry.line}`.slice(0, 200), ...timing };
  const name = entry.workflow;
  if (name !== undefined && a.workflows) return { ...base, run: ({ slot, signal }) => runScheduledWorkflow(a, entry, name, slot, signal) };
  return { ...base, run: ({ slot, signal }) => admitted(a, () => runScheduledTurn(a, entry, slot, signal)) };
}

/** Start the entry's workflow for this slot (once in the fleet); one with model turns spends the autonomous budget. */
async function runScheduledWorkflow(a: AgentBackgroundState, entry: ScheduleEntry, name: string, slot: Date, signal: AbortSignal) {
  const workflows = a.workflows!;
  const go = async () => {
    // The slot is claimed by the runner; the run is claimed again by its key, so a trigger runs once in the fleet.
    const run = await workflows.trigger(name, { trigger: 'schedule', key: `${entry.id}@${slot.toISOString()}`, userId: a.userId, signal });
    if (!run) return { skipped: `workflow ${name}: this slot already has a run` };
    if (run.status !== 'ok') throw new Error(`workflow ${name} run ${run.id} ${run.status}: ${run.error ?? 'no error recorded'}`);
    return `workflow ${name} run ${run.id} ok (${run.steps.length} steps)`;
  };
  // A workflow with model turns spends the autonomous budget; one of tool steps only does not.
  return ((await workflows.get(name))?.modelSteps ?? 0) > 0 ? admitted(a, go) : go();
}

/** A `cron` turn with the entry's instruction, in the entry's session of the day, delivered. */
async function runScheduledTurn(a: AgentBackgroundState, entry: ScheduleEntry, slot: Date, signal: AbortSignal): Promise<string> {
  const sessionId = `${entry.id.replace(':', '-')}-${day(slot)}`;
  const result = await a.runtime.generate({
    sessionId,
    userId: a.userId,
    source: 'cron',
    message: entry.instruction,
    signal: { source: 'cron', signal_id: entry.id, trace_id: `t_${entry.id.replace(':', '_')}_${slot.getTime()}` },
    abortSignal: signal,
    surface: 'background',
  });
  traceOf(a, entry.id, slot, result, sessionId);
  return deliverTurn(a, entry.id, 'cron', sessionId, result);
}
