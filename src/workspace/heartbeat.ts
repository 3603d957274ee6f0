/** Input of the HEARTBEAT.md writer. */
export interface HeartbeatInput {
  readonly sessionId: string;
  /** Where the turn ran: `repl`, `http`, `web`, `cron`, … */
  readonly surface: string;
  readonly turnCount: number;
  /** Open loops after this turn. `undefined` keeps the previous list; `[]` clears it. */
  readonly openLoops?: readonly string[] | undefined;
}

/** HEARTBEAT.md, parsed. */
export interface ParsedHeartbeat {
  readonly lastSeen?: string;
  readonly sessionId?: string;
  readonly surface?: string;
  readonly turnCount?: number;
  readonly openLoops: readonly string[];
  /** The `## Schedule` section exactly as on disk (heading line included), if present. */
  readonly scheduleRaw?: string;
}

/** At most this many open loops are kept (the most recent). */
export const MAX_OPEN_LOOPS = 10;
const MAX_VALUE_CHARS = 300;

export const DEFAULT_SCHEDULE_SECTION = `## Schedule

<!-- Yours: recurring checks, one per line. The agent keeps this section byte for byte. -->
`;

const isFence = (line: string) => /^\s*(?:```|~~~)/.test(line);

interface Heading {
  readonly level: number;
  readonly title: string;
  /** Character offset of the line start. */
  readonly offset: number;
}

/** Level-1/2 headings outside fenced code blocks, with their character offsets. */
function topHeadings(content: string): Heading[] {
  const out: Heading[] = [];
  let offset = 0;
  let inFence = false;
  for (const line of content.split('\n')) {
    if (isFence(line)) inFence = !inFence;
    else if (!inFence) {
      const m = /^(#{1,2})\s+(.*?)\s*\r?$/.exec(line);
      if (m) out.push({ level: (m[1] ?? '').length, title: m[2] ?? '', offset });
    }
    offset += line.length + 1;
  }
  return out;
}

/**
 * The user-owned `## Schedule` section, byte for byte: from its heading line up to the next level-1/2
 * heading (or the end of the file), comments, blank lines and unknown fields included.
 */
export function extractScheduleSection(content: string): string | undefined {
  return scheduleSection(content, topHeadings(content));
}

function scheduleSection(content: string, heads: readonly Heading[]): string | undefined {
  const i = heads.findIndex((h) => h.level === 2 && /^schedule$/i.test(h.title));
  if (i < 0) return undefined;
  const start = heads[i]?.offset ?? 0;
  const end = heads[i + 1]?.offset ?? content.length;
  return content.slice(start, Math.min(end, content.length));
}

const oneLine = (value: string) => {
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_VALUE_CHARS ? `${flat.slice(0, MAX_VALUE_CHARS - 1)}…` : flat;
};

/** `- key: value` lines of the state fields (no `g` flag: `exec` keeps no state between calls). */
const fieldPattern = (key: string) => new RegExp(`^\\s*[-*]\\s*${key}\\s*:\\s*(.*?)\\s*$`, 'mi');
const FIELD_PATTERNS = {
  turn_count: fieldPattern('turn_count'),
  last_seen: fieldPattern('last_seen'),
  session_id: fieldPattern('session_id'),
  surface: fieldPattern('surface'),
} as const;

/** Parse the agent-owned fields and the schedule out of HEARTBEAT.md. */
export function parseHeartbeat(content: string): ParsedHeartbeat {
  const field = (key: keyof typeof FIELD_PATTERNS) => FIELD_PATTERNS[key].exec(content)?.[1];
  const turns = Number(field('turn_count'));
  const loops: string[] = [];
  const heads = topHeadings(content);
  const li = heads.findIndex((h) => h.level === 2 && /^open[ _]loops$/i.test(h.title));
  if (li >= 0) {
    const body = content.slice(heads[li]?.offset ?? 0, heads[li + 1]?.offset ?? content.length).split('\n').slice(1);
    for (const line of body) {
      const m = /^\s*[-*]\s+(.*?)\s*$/.exec(line);
      if (m?.[1] && m[1] !== '(none)') loops.push(m[1]);
    }
  }
  const scheduleRaw = scheduleSection(content, heads);
  const out: { -readonly [K in keyof ParsedHeartbeat]: ParsedHeartbeat[K] } = { openLoops: loops };
  const lastSeen = field('last_seen');
  const sessionId = field('session_id');
  const surface = field('surface');
  if (lastSeen) out.lastSeen = lastSeen;
  if (sessionId) out.sessionId = sessionId;
  if (surface) out.surface = surface;
  if (Number.isInteger(turns)) out.turnCount = turns;
  if (scheduleRaw !== undefined) out.scheduleRaw = scheduleRaw;
  return out;
}

/**
 * Render HEARTBEAT.md: the agent-owned `## State` and `## Open Loops` sections, then the user-owned
 * `## Schedule` section exactly as given (or an empty default).
 */
export function renderHeartbeat(
  state: { readonly lastSeen: Date; readonly sessionId: string; readonly surface: string; readonly turnCount: number; readonly openLoops: readonly string[] },
  scheduleRaw: string = DEFAULT_SCHEDULE_SECTION,
): string {
  const loops = state.openLoops.map(oneLine).filter((l) => l !== '').slice(-MAX_OPEN_LOOPS);
  return [
    '# HEARTBEAT.md - Between-Session Memo',
    '',
    '<!-- Rewritten by the agent at every turn end. Only the ## Schedule section is yours: it is kept byte for byte. -->',
    '',
    '## State',
    '',
    `- last_seen: ${state.lastSeen.toISOString()}`,
    `- session_id: ${oneLine(state.sessionId)}`,
    `- surface: ${oneLine(state.surface)}`,
    `- turn_count: ${Math.max(0, Math.trunc(state.turnCount))}`,
    '',
    '## Open Loops',
    '',
    ...(loops.length > 0 ? loops.map((l) => `- ${l}`) : ['- (none)']),
    '',
    '',
  ].join('\n') + scheduleRaw;
}

/** Next HEARTBEAT.md content from the previous one (or none) and this turn's state. */
export function nextHeartbeat(previous: string | undefined, input: HeartbeatInput, now: Date): string {
  const parsed = previous === undefined ? undefined : parseHeartbeat(previous);
  const openLoops = input.openLoops ?? parsed?.openLoops ?? [];
  return renderHeartbeat(
    { lastSeen: now, sessionId: input.sessionId, surface: input.surface, turnCount: input.turnCount, openLoops },
    parsed?.scheduleRaw,
  );
}
