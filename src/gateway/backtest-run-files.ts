/**
 * Safe reads of agent backtest run folders for the gateway: one directory per tenant under the configured root
 * (`<dir>/<userId>/<run>/`), a run id that is one plain path segment, no symlink anywhere on the way (a tenant's
 * folder cannot point into another's), every file size-checked before it is read.
 */
import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { badRequest, HttpError, notFound } from './http-error';

/** A run id: one path segment of letters, digits, `.`, `_`, `-`, not starting with a dot (so never `.` or `..`). */
const RUN_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
/** A tenant's folder name: the user id, unless it could name something else (`.`, `..`, a hidden folder). */
const TENANT = /^[A-Za-z0-9_:@-][A-Za-z0-9._:@-]{0,127}$/;

/** The configured root and its file size limit. */
export interface RunFolders {
  readonly dir: string;
  readonly maxFileBytes: number;
}

const noRun = (id: string) => notFound(`No backtest run ${JSON.stringify(id)} in your runs.`);

/** Whether `child` is `parent` or inside it (both real paths). */
const inside = (parent: string, child: string) => child === parent || child.startsWith(parent + path.sep);

/** The tenant's folder as a real path, or undefined when the tenant has none (or a user id that is not a plain name). */
export async function tenantDir(folders: RunFolders, userId: string): Promise<string | undefined> {
  if (!TENANT.test(userId)) return undefined;
  const candidate = path.join(folders.dir, userId);
  const st = await lstat(candidate).catch(() => undefined);
  if (!st || st.isSymbolicLink() || !st.isDirectory()) return undefined;
  const [root, real] = await Promise.all([realpath(folders.dir), realpath(candidate)]);
  return inside(root, real) && real !== root ? real : undefined;
}

/** The real path of the tenant's run `id` (400 for an id that is not one plain segment; 404 when missing or a symlink). */
export async function runDir(folders: RunFolders, userId: string, id: string): Promise<string> {
  if (!RUN_ID.test(id) || id.includes('..')) throw badRequest(`run: expected 1–128 characters of A-Z a-z 0-9 . _ - (one folder name), got ${JSON.stringify(id.slice(0, 40))}.`);
  const tenant = await tenantDir(folders, userId);
  if (!tenant) throw noRun(id);
  const candidate = path.join(tenant, id);
  const st = await lstat(candidate).catch(() => undefined);
  if (!st || st.isSymbolicLink() || !st.isDirectory()) throw noRun(id);
  const real = await realpath(candidate);
  if (!inside(tenant, real) || real === tenant) throw noRun(id);
  return real;
}

/**
 * Open a run file for reading: not through a symlink (O_NOFOLLOW, so one swapped in after the folder was checked is
 * refused too), a regular file, within the size limit. Undefined when absent.
 */
async function openRunFile(folders: RunFolders, dir: string, name: string, runId: string): Promise<FileHandle | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path.join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw noRun(runId);
  }
  const st = await fh.stat();
  if (!st.isFile() || st.size > folders.maxFileBytes) {
    await fh.close();
    if (!st.isFile()) throw noRun(runId);
    throw new HttpError(413, 'HTTP_PAYLOAD_TOO_LARGE', `${name} is larger than ${folders.maxFileBytes} bytes (the gateway's backtestRuns.maxFileBytes); open it from the run folder.`);
  }
  return fh;
}

/** A run file as text (undefined when absent). */
export async function readRunFile(folders: RunFolders, dir: string, name: string, runId: string): Promise<string | undefined> {
  const fh = await openRunFile(folders, dir, name, runId);
  if (!fh) return undefined;
  try {
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}

/** The lines `[offset, offset + limit)` of a JSON-lines run file and the number of non-empty lines (undefined when absent). */
export async function readLines(folders: RunFolders, dir: string, name: string, runId: string, offset: number, limit: number): Promise<{ total: number; lines: string[] } | undefined> {
  const fh = await openRunFile(folders, dir, name, runId);
  if (!fh) return undefined;
  const lines: string[] = [];
  let total = 0;
  try {
    const reader = createInterface({ input: fh.createReadStream({ encoding: 'utf8', autoClose: false }), crlfDelay: Infinity });
    for await (const line of reader) {
      if (line.trim() === '') continue;
      if (total >= offset && total < offset + limit) lines.push(line);
      total++;
    }
  } finally {
    await fh.close();
  }
  return { total, lines };
}

/** The tenant's run folders (plain directories only, never a symlink), at most `max` of them, by name. */
export async function listRunDirs(folders: RunFolders, userId: string, max: number): Promise<Array<{ id: string; dir: string }>> {
  const tenant = await tenantDir(folders, userId);
  if (!tenant) return [];
  const entries = await readdir(tenant, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory() && RUN_ID.test(e.name))
    .map((e) => ({ id: e.name, dir: path.join(tenant, e.name) }))
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, max);
}
