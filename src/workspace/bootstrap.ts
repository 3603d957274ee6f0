import { readdir } from 'node:fs/promises';
import { renameConfined, statConfined } from './safe-fs';

/** The token the agent puts on its own line at the end of the onboarding reply. */
export const BOOTSTRAP_DONE_TOKEN = 'BOOTSTRAP_DONE';

/** True when the last non-blank line of `reply` is exactly `BOOTSTRAP_DONE` (surrounding spaces ignored). */
export function hasBootstrapDoneToken(reply: string): boolean {
  const lines = reply.trimEnd().split('\n');
  return (lines[lines.length - 1] ?? '').trim() === BOOTSTRAP_DONE_TOKEN;
}

/** The reply without its trailing `BOOTSTRAP_DONE` line, for display to the operator. */
export function stripBootstrapDoneToken(reply: string): string {
  if (!hasBootstrapDoneToken(reply)) return reply;
  const lines = reply.trimEnd().split('\n');
  lines.pop();
  return lines.join('\n').trimEnd();
}

/** `2026-03-01T12-00-00.000Z`: an ISO time safe in file names. */
export function fileTimestamp(date: Date): string {
  return date.toISOString().replace(/:/g, '-');
}

/**
 * Archive BOOTSTRAP.md as `BOOTSTRAP.md.done.<timestamp>` (audit trail kept). Returns the archive name,
 * or `undefined` when there is no BOOTSTRAP.md.
 */
export async function archiveBootstrap(root: string, now: Date): Promise<string | undefined> {
  if ((await statConfined(root, 'BOOTSTRAP.md')) === undefined) return undefined;
  const existing = new Set(await readdir(root));
  let name = `BOOTSTRAP.md.done.${fileTimestamp(now)}`;
  for (let i = 2; existing.has(name); i++) name = `BOOTSTRAP.md.done.${fileTimestamp(now)}-${i}`;
  await renameConfined(root, 'BOOTSTRAP.md', name);
  return name;
}
