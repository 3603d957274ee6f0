import { isoDate } from '../files';
import type { SelectedLog } from './selection';

/** The literal a curator returns when nothing deserves promotion (accepted only as an exact match). */
export const NOTHING_TO_PROMOTE = 'NOTHING_TO_PROMOTE';

/** The curator's system instructions. */
export const CURATOR_INSTRUCTIONS = `You are the librarian of a finance agent's long-term memory. You read recent daily journal excerpts and decide what deserves to be promoted into MEMORY.md, the curated memory fed into every future session.

Rules:
- Extract durable signal only: stable facts about the operator and their setup, lasting preferences, and decisions with their reasons. Ignore noise: prices and quotes, transient market moves, small talk, one-off questions, anything already resolved or superseded.
- Do not duplicate facts that are already in MEMORY.md, even reworded.
- Do not include anything that looks sensitive: API keys, tokens, passwords, private keys, seed phrases or mnemonic words, wallet addresses, account numbers, transaction hashes or signatures, email addresses, phone numbers.
- Write short declarative bullets grouped under "### Facts", "### Preferences" and "### Decisions" (omit empty groups). No other headings, no preamble, no closing remarks.
- If nothing is worth promoting, reply with exactly ${NOTHING_TO_PROMOTE} on its own line and nothing else.`;

/** The user prompt: the MEMORY.md tail for dedupe, then the selected logs oldest first. */
export function buildCuratorPrompt(memoryTail: string, logs: readonly SelectedLog[]): string {
  const parts = [
    'Current MEMORY.md (tail, for deduplication):',
    '<memory>',
    memoryTail.trim() === '' ? '(empty)' : memoryTail.trimEnd(),
    '</memory>',
    '',
    'Daily journal excerpts, oldest first:',
  ];
  for (const log of logs) parts.push(`<log file="${log.rel}">`, log.content.trimEnd(), '</log>');
  parts.push('', `Reply with the bullets to promote, or exactly ${NOTHING_TO_PROMOTE}.`);
  return parts.join('\n');
}

/** True only when the whole response (after trim) is the marker; a response that mentions it is content. */
export function isNothingToPromote(response: string): boolean {
  return response.trim() === NOTHING_TO_PROMOTE;
}

/** The `## Dreamed YYYY-MM-DD` section for a response; `#`/`##` headings inside are demoted to `###`. */
export function renderDreamedSection(response: string, date: Date): string {
  const body = response
    .trim()
    .split('\n')
    .map((line) => line.replace(/^#{1,2}(?=\s)/, '###'))
    .join('\n');
  return `## Dreamed ${isoDate(date)}\n\n${body}\n`;
}

/** MEMORY.md with the section appended (existing bytes untouched, one blank line between). */
export function appendSection(existing: string | undefined, section: string): string {
  if (existing === undefined || existing.trim() === '') return `# MEMORY.md - Long-Term Memory\n\n${section}`;
  const sep = existing.endsWith('\n\n') ? '' : existing.endsWith('\n') ? '\n' : '\n\n';
  return `${existing}${sep}${section}`;
}
