import { MinaraError } from '../errors/index';
import { redactSecrets } from '../safety/secret-patterns';
import { DAILY_LOG_DIR, isoDate, sessionFileSlug } from './files';
import { atomicWriteConfined, readConfined } from './safe-fs';

/** One turn remembered for the next journal entry. */
export interface JournalTurn {
  readonly turnCount: number;
  readonly at: Date;
  readonly userText?: string | undefined;
  readonly replyText?: string | undefined;
}

/** Input of one journal append. */
export interface JournalEntryInput {
  readonly sessionId: string;
  readonly surface: string;
  readonly at: Date;
  /** Turns since the previous entry (rendered as excerpts) … */
  readonly turns?: readonly JournalTurn[] | undefined;
  /** … or a summary written by the host (used instead of the excerpts when given). */
  readonly summary?: string | undefined;
  readonly openLoops?: readonly string[] | undefined;
}

const EXCERPT_CHARS = 400;

function excerpt(text: string): string {
  const flat = redactSecrets(text).replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS - 1)}…` : flat;
}

/**
 * Render one journal entry. Secrets (API keys, tokens, private-key blocks) are redacted before anything
 * reaches the journal, which later feeds the dreaming task.
 */
export function renderJournalEntry(input: JournalEntryInput): string {
  const turns = input.turns ?? [];
  const first = turns[0]?.turnCount;
  const last = turns[turns.length - 1]?.turnCount;
  const range = first === undefined ? '' : first === last ? ` · turn ${first}` : ` · turns ${first}–${last}`;
  const lines = [`## ${input.at.toISOString().slice(11, 16)} UTC${range} · ${input.surface.replace(/\s+/g, ' ')}`, ''];
  if (input.summary !== undefined && input.summary.trim() !== '') {
    lines.push(redactSecrets(input.summary.trim()));
  } else {
    for (const t of turns) {
      if (t.userText?.trim()) lines.push(`- **Operator (turn ${t.turnCount}):** ${excerpt(t.userText)}`);
      if (t.replyText?.trim()) lines.push(`- **Agent (turn ${t.turnCount}):** ${excerpt(t.replyText)}`);
    }
    if (lines.length === 2) lines.push('- (no text recorded)');
  }
  const loops = (input.openLoops ?? []).map(excerpt).filter((l) => l !== '');
  if (loops.length > 0) lines.push('', `Open loops: ${loops.join('; ')}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Append an entry to `memory/YYYY-MM-DD-<session>.md` (per session, so the REPL and the gateway never
 * race on one file). The file is rewritten atomically; past the read cap, it rolls over to `-2`, `-3`, ….
 * Returns the workspace-relative path written.
 */
export async function appendDailyLog(root: string, input: JournalEntryInput, maxReadBytes: number): Promise<string> {
  const base = `${isoDate(input.at)}-${sessionFileSlug(input.sessionId)}`;
  const entry = renderJournalEntry(input);
  for (let part = 1; part <= 100; part++) {
    const rel = `${DAILY_LOG_DIR}/${base}${part === 1 ? '' : `-${part}`}.md`;
    let existing: string | undefined;
    try {
      existing = (await readConfined(root, rel, maxReadBytes))?.content;
    } catch (error) {
      if (MinaraError.isInstance(error) && error.code === 'FILE_TOO_LARGE') continue;
      throw error;
    }
    if (existing !== undefined && Buffer.byteLength(existing) + Buffer.byteLength(entry) + 1 > maxReadBytes) continue;
    const header = `# Daily journal ${isoDate(input.at)} (session ${input.sessionId.replace(/\s+/g, ' ')})\n`;
    const body = existing === undefined ? `${header}\n${entry}` : `${existing.replace(/\n*$/, '\n')}\n${entry}`;
    await atomicWriteConfined(root, rel, body);
    return rel;
  }
  throw new MinaraError('FILE_TOO_LARGE', `The daily journal ${base}.md has no room left in 100 parts.`);
}
