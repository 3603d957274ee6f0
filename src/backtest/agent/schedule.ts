import { parseSchedule } from '../../background/schedule';
import { MinaraError } from '../../errors/minara-error';
import { parseCron } from '../../runtime/cron';

/**
 * When the agent decides: every bar, every `n` bars, or the user's HEARTBEAT.md `## Schedule` section (its timed
 * entries, on the simulated clock; the instruction of each entry that falls due is added to the prompt).
 */
export type AgentSchedule =
  | { readonly kind: 'every-bar' }
  | { readonly kind: 'every-n-bars'; readonly n: number }
  | { readonly kind: 'heartbeat'; readonly section: string };

/** Whether a bar is a decision and the schedule instructions due at it. */
export interface ScheduleCheck {
  (index: number, now: number, previousNow: number | undefined): { readonly due: boolean; readonly instructions: readonly string[] };
}

/** Compile a schedule; a bad one fails naming the field. */
export function compileSchedule(schedule: AgentSchedule): ScheduleCheck {
  if (schedule.kind === 'every-bar') return () => ({ due: true, instructions: [] });
  if (schedule.kind === 'every-n-bars') {
    const n = schedule.n;
    if (!Number.isInteger(n) || n < 1) throw new MinaraError('INVALID_ARGUMENT', `schedule.n: expected a whole number of bars ≥ 1, got ${String(n)}`);
    return (index) => ({ due: index % n === 0, instructions: [] });
  }
  if (schedule.kind !== 'heartbeat') throw new MinaraError('INVALID_ARGUMENT', `schedule.kind: expected 'every-bar', 'every-n-bars' or 'heartbeat', got ${String((schedule as { kind?: unknown }).kind)}`);
  const parsed = parseSchedule(schedule.section);
  if (parsed.problems.length > 0) throw new MinaraError('INVALID_ARGUMENT', `schedule.section: ${parsed.problems.map((p) => `"${p.line}": ${p.reason}`).join('; ')}`);
  const entries = parsed.entries.filter((e) => !e.workflow);
  if (entries.length === 0) throw new MinaraError('INVALID_ARGUMENT', 'schedule.section: no timed entry (e.g. "- every 1d: review BTC and decide")');
  const compiled = entries.map((e) => ({ instruction: e.instruction, every: e.every, cron: e.cron ? parseCron(e.cron) : undefined }));
  return (_index, now, previousNow) => {
    const instructions: string[] = [];
    for (const e of compiled) {
      const due =
        previousNow === undefined
          ? true
          : e.every !== undefined
            ? Math.floor(now / e.every) > Math.floor(previousNow / e.every)
            : e.cron !== undefined && e.cron.next(new Date(previousNow)).getTime() <= now;
      if (due) instructions.push(e.instruction);
    }
    return { due: instructions.length > 0, instructions };
  };
}
