import { createHash } from 'node:crypto';
import { parseCron, resolveTimeZone } from '../runtime/cron';

/** One timed entry of HEARTBEAT.md's `## Schedule`: an instruction on an interval or a cron expression. */
export interface ScheduleEntry {
  /** `schedule:<8 hex of the line>`: stable while the line is unchanged. */
  readonly id: string;
  readonly every?: number | undefined;
  readonly cron?: string | undefined;
  /** The IANA time zone `cron` is read in, when the line named one (`weekdays 9:00 New York: …`); else UTC. */
  readonly timezone?: string | undefined;
  readonly instruction: string;
  /** `workflow <name>` as the instruction: the entry runs that workflow (no model turn) instead of a turn. */
  readonly workflow?: string | undefined;
  /** The line as written. */
  readonly line: string;
}

/** What {@link parseSchedule} found. */
export interface ParsedSchedule {
  /** Timed entries: each becomes a background job that starts a turn. */
  readonly entries: readonly ScheduleEntry[];
  /** Untimed entries: the standing tasks every heartbeat turn works through. */
  readonly tasks: readonly string[];
  /** Lines that look timed but do not parse, with why (reported, never fatal). */
  readonly problems: ReadonlyArray<{ readonly line: string; readonly reason: string }>;
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const SEPARATOR = /^\s*(?::|—|–|-|→|->)\s*/;
const MIN_EVERY_MS = 60_000;

/** `every 6h`, `every 30m`, `every 2d`, `every 90 min` → ms, or undefined. */
function interval(spec: string): number | undefined {
  const m = /^(\d+)\s*(s|m|min|h|d)$/i.exec(spec.trim());
  if (!m) return undefined;
  return Number(m[1]) * (UNIT_MS[(m[2] ?? '').toLowerCase()] ?? 0);
}

const idOf = (line: string) => `schedule:${createHash('sha256').update(line).digest('hex').slice(0, 8)}`;

/** An entry, with `workflow` set when its instruction is `workflow <name>`. */
function entry(line: string, timing: { every: number } | { cron: string; timezone?: string | undefined }, instruction: string): ScheduleEntry {
  const wf = /^workflow\s+([a-z0-9][a-z0-9_-]{0,47})$/i.exec(instruction);
  return { id: idOf(line), ...timing, instruction, ...(wf ? { workflow: (wf[1] ?? '').toLowerCase() } : {}), line };
}

/** What follows a time or a cron expression: `[<zone>]<separator><instruction>`. */
type Tail = { readonly instruction: string; readonly timezone?: string | undefined } | { readonly problem: string };

/**
 * Split `rest` into an optional time zone and the instruction. A zone is the words before the separator when
 * they name one (`New York`, `Europe/London`, `UTC`); words with a `/` that name none are a problem; other words
 * are part of the instruction, as before zones existed (`daily 09:00 check funding`).
 */
function zoneAndInstruction(rest: string, separators: RegExp): Tail {
  const zoned = new RegExp(`^\\s+([A-Za-z][A-Za-z0-9_/+ -]*?)\\s*(?:${separators.source})\\s*(.*)$`).exec(rest);
  if (zoned) {
    const zone = resolveTimeZone(zoned[1] ?? '');
    if (zone !== undefined) return { timezone: zone, instruction: (zoned[2] ?? '').trim() };
    if ((zoned[1] ?? '').includes('/')) return { problem: `unknown time zone "${(zoned[1] ?? '').trim()}" (an IANA name such as "America/New_York", or its city: "New York")` };
  }
  return { instruction: rest.replace(SEPARATOR, '').trim() };
}

/** `daily`, `weekdays` and `weekends` as the day-of-week field of their cron expression. */
const DAYS: Readonly<Record<string, string>> = { daily: '*', weekdays: '1-5', weekends: '0,6' };

/** A `daily|weekdays|weekends HH:MM [zone]: <instruction>` line: its entry or its problem. */
function atTime(line: string, kind: string, rest: string): ScheduleEntry | { problem: string } {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)(.*)$/.exec(rest);
  if (!m) return { problem: `expected "${kind} HH:MM [time zone]: <instruction>" (UTC unless a zone is named), e.g. "${kind} 09:00 New York: morning brief"` };
  const tail = zoneAndInstruction(m[3] ?? '', /:|—|–|-|→|->/);
  if ('problem' in tail) return tail;
  if (tail.instruction === '') return { problem: 'no instruction after the time' };
  return entry(line, { cron: `${Number(m[2])} ${Number(m[1])} * * ${DAYS[kind]}`, ...(tail.timezone ? { timezone: tail.timezone } : {}) }, tail.instruction);
}

/** A `cron <5 fields> [zone]: <instruction>` line: its entry or its problem. */
function cronLine(line: string, rest: string): ScheduleEntry | { problem: string } {
  const m = /^((?:\S+\s+){4}\S+)((?:\s+[^:—–→]+?)?\s*(?::|—|–|→|->)\s*.+)$/.exec(rest);
  const cron = m?.[1];
  if (!m || !cron) return { problem: 'expected "cron <5 fields> [time zone]: <instruction>", e.g. "cron 0 9 * * 1-5 New York: weekday brief"' };
  const tail = zoneAndInstruction(m[2] ?? '', /:|—|–|→|->/);
  if ('problem' in tail) return tail;
  try {
    parseCron(cron, { timezone: tail.timezone });
  } catch (error) {
    return { problem: `cron "${cron}": ${error instanceof Error ? error.message : String(error)}` };
  }
  return entry(line, { cron, ...(tail.timezone ? { timezone: tail.timezone } : {}) }, tail.instruction);
}

/**
 * Parse the user's `## Schedule` section of HEARTBEAT.md, one entry per line (list markers and HTML comments
 * ignored):
 *
 * - `every 6h: check BTC funding and tell me if it flips` — an interval (`s`, `m`/`min`, `h`, `d`; at least 1 minute);
 * - `daily 09:00: morning brief` — every day at that time (UTC);
 * - `weekdays 9:00 New York: market open brief` — Monday to Friday at 09:00 New York time, across daylight-saving
 *   changes (`daily` and `weekends` take a zone the same way: an IANA name such as `Europe/London`, its city, or `UTC`);
 * - `cron 0 9 * * 1-5: weekday brief` or `0 9 * * 1-5: weekday brief` — a cron expression (UTC);
 *   `cron 0 9 * * 1-5 Asia/Tokyo: weekday brief` reads it in that zone;
 * - anything else (`watch my open positions`) — a standing task for every heartbeat turn.
 *
 * A timed entry whose instruction is `workflow <name>` (`every 1h: workflow rebalance-check`) runs that workflow
 * (deterministic tool steps, no model turn) instead of a turn.
 *
 * A line that starts like a timed entry but does not parse is a problem, reported with the reason.
 */
export function parseSchedule(section: string): ParsedSchedule {
  const entries: ScheduleEntry[] = [];
  const tasks: string[] = [];
  const problems: Array<{ line: string; reason: string }> = [];
  const add = (line: string, r: ScheduleEntry | { problem: string }) => ('problem' in r ? problems.push({ line, reason: r.problem }) : entries.push(r));
  const text = section.replace(/<!--[\s\S]*?-->/g, '');
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue;
    const line = raw.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '').trim();
    if (line === '') continue;
    const timed = /^(every|daily|weekdays|weekends|cron)\b\s*(.*)$/i.exec(line);
    const bareCron = /^((?:\S+\s+){4}\S+)\s*:\s*(.+)$/.exec(line);
    if (timed) {
      const kind = (timed[1] ?? '').toLowerCase();
      const rest = timed[2] ?? '';
      if (kind === 'every') {
        const m = /^(\d+\s*[a-z]+)(.*)$/i.exec(rest);
        const every = m ? interval(m[1] ?? '') : undefined;
        const instruction = (m?.[2] ?? '').replace(SEPARATOR, '').trim();
        if (every === undefined) problems.push({ line, reason: 'expected "every <number><s|m|h|d>: <instruction>", e.g. "every 6h: check funding"' });
        else if (every < MIN_EVERY_MS) problems.push({ line, reason: 'the shortest interval is 1 minute' });
        else if (instruction === '') problems.push({ line, reason: 'no instruction after the interval' });
        else entries.push(entry(line, { every }, instruction));
      } else if (kind === 'cron') add(line, cronLine(line, rest));
      else add(line, atTime(line, kind, rest));
      continue;
    }
    if (bareCron) {
      const cron = bareCron[1] ?? '';
      // Only a line whose first five words all look like cron fields is a cron entry.
      if (cron.split(/\s+/).every((f) => /^[\d*/,-]+$/.test(f))) {
        try {
          parseCron(cron);
          entries.push(entry(line, { cron }, (bareCron[2] ?? '').trim()));
        } catch (error) {
          problems.push({ line, reason: `cron "${cron}": ${error instanceof Error ? error.message : String(error)}` });
        }
        continue;
      }
    }
    tasks.push(line);
  }
  return { entries, tasks, problems };
}
