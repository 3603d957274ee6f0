import { randomBytes } from 'node:crypto';
import { closeSync, constants as fsConstants, lstatSync, mkdirSync, openSync, realpathSync, renameSync, type Stats, unlinkSync, writeFileSync } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, realpath, rename, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { MinaraError, SandboxEscapeError } from '../errors/index';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../util/private-fs';

/** Default cap on one confined read: 2 MiB (OpenClaw's boundary-safe open uses the same). */
export const DEFAULT_MAX_READ_BYTES = 2 * 1024 * 1024;

const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;

/** A confined file's identity, used by the mtime cache. */
export interface ConfinedStat {
  /** Real (symlink-resolved) absolute path, inside the workspace. */
  readonly realPath: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
}

/** The result of a confined read. */
export interface ConfinedRead extends ConfinedStat {
  readonly content: string;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The lexical absolute path of `rel` under `root`; throws when `rel` escapes it. */
export function joinConfined(root: string, rel: string): string {
  if (rel.includes('\0')) throw new SandboxEscapeError(rel.replace(/\0/g, '\\0'), 'the path contains a NUL byte');
  if (isAbsolute(rel)) throw new SandboxEscapeError(rel, 'an absolute path is not allowed in the workspace');
  const abs = resolve(root, rel);
  const back = relative(resolve(root), abs);
  if (back === '' || back.startsWith('..') || isAbsolute(back)) {
    throw new SandboxEscapeError(rel, 'the path resolves outside the workspace');
  }
  return abs;
}

/**
 * Resolve `rel` inside `root` following symlinks, refusing any that lead out of the workspace.
 * Returns `undefined` when the file does not exist.
 */
export async function resolveConfined(root: string, rel: string): Promise<string | undefined> {
  const abs = joinConfined(root, rel);
  let realRoot: string;
  let real: string;
  try {
    realRoot = await realpath(root);
    real = await realpath(abs);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  if (!inside(realRoot, real)) throw new SandboxEscapeError(rel, 'it is a symlink that leads outside the workspace');
  return real;
}

function toStat(realPath: string, st: Stats): ConfinedStat {
  return { realPath, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino };
}

/** Stat a confined regular file, or `undefined` when it is missing (or not a regular file). */
export async function statConfined(root: string, rel: string): Promise<ConfinedStat | undefined> {
  const real = await resolveConfined(root, rel);
  if (real === undefined) return undefined;
  try {
    const st = await lstat(real);
    return st.isFile() ? toStat(real, st) : undefined;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Resolve and open a confined file for reading with `O_NOFOLLOW`; undefined when it is missing. */
async function openConfined(root: string, rel: string): Promise<{ real: string; handle: FileHandle } | undefined> {
  const real = await resolveConfined(root, rel);
  if (real === undefined) return undefined;
  try {
    return { real, handle: await open(real, fsConstants.O_RDONLY | O_NOFOLLOW) };
  } catch (error) {
    if (isMissing(error)) return undefined;
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new SandboxEscapeError(rel, 'the file was swapped for a symlink');
    throw error;
  }
}

/**
 * Read a confined regular file as UTF-8, opened with `O_NOFOLLOW` on the resolved path. Files larger
 * than `maxBytes` are refused with `FILE_TOO_LARGE` (nothing beyond the cap is read). Returns
 * `undefined` when the file is missing.
 */
export async function readConfined(root: string, rel: string, maxBytes = DEFAULT_MAX_READ_BYTES): Promise<ConfinedRead | undefined> {
  const opened = await openConfined(root, rel);
  if (opened === undefined) return undefined;
  const { real, handle } = opened;
  try {
    const st = await handle.stat();
    if (!st.isFile()) return undefined;
    if (st.size > maxBytes) {
      throw new MinaraError('FILE_TOO_LARGE', `${rel} is ${st.size} bytes; workspace reads are capped at ${maxBytes} bytes.`);
    }
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let total = 0;
    while (total < buf.length) {
      const { bytesRead } = await handle.read(buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    if (total > maxBytes) {
      throw new MinaraError('FILE_TOO_LARGE', `${rel} grew past ${maxBytes} bytes while being read.`);
    }
    return { ...toStat(real, st), content: buf.subarray(0, total).toString('utf8') };
  } finally {
    await handle.close();
  }
}

/** The result of {@link readTailConfined}. */
export interface ConfinedTail extends ConfinedStat {
  /** The last `maxBytes` bytes (cut on a character boundary), as UTF-8. */
  readonly content: string;
  /** Whether the head of the file was dropped. */
  readonly truncated: boolean;
}

/** Read only the last `maxBytes` bytes of a confined file (bounded whatever the file size). */
export async function readTailConfined(root: string, rel: string, maxBytes: number): Promise<ConfinedTail | undefined> {
  const opened = await openConfined(root, rel);
  if (opened === undefined) return undefined;
  const { real, handle } = opened;
  try {
    const st = await handle.stat();
    if (!st.isFile()) return undefined;
    const start = Math.max(0, st.size - maxBytes);
    const buf = Buffer.alloc(st.size - start);
    let total = 0;
    while (total < buf.length) {
      const { bytesRead } = await handle.read(buf, total, buf.length - total, start + total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    let from = 0;
    // Skip UTF-8 continuation bytes so the slice starts on a character boundary.
    if (start > 0) while (from < total && ((buf[from] ?? 0) & 0xc0) === 0x80) from++;
    return { ...toStat(real, st), content: buf.subarray(from, total).toString('utf8'), truncated: start > 0 };
  } finally {
    await handle.close();
  }
}

/** Make sure the parent directory of `rel` exists and is inside the workspace; returns the target path. */
async function confinedTarget(root: string, rel: string): Promise<string> {
  const abs = joinConfined(root, rel);
  const parent = dirname(abs);
  await mkdir(parent, { recursive: true, mode: PRIVATE_DIR_MODE });
  const [realRoot, realParent] = await Promise.all([realpath(root), realpath(parent)]);
  if (!inside(realRoot, realParent)) throw new SandboxEscapeError(rel, 'its directory is a symlink that leads outside the workspace');
  return join(realParent, abs.slice(parent.length + 1));
}

/** The name of a temp file an atomic write creates next to its target; group 1 is the writer's pid. */
export const TEMP_FILE_PATTERN = /^\.[0-9a-f]{12}\.(\d+)\.tmp$/;

async function writeTemp(target: string, content: string | Uint8Array, sync = true): Promise<string> {
  const tmp = join(dirname(target), `.${randomBytes(6).toString('hex')}.${process.pid}.tmp`);
  // Owner-only whatever the umask (a replaced file becomes 0600 too): other local users read no workspace file.
  const handle = await open(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(content);
    if (sync) await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw error;
  }
  await handle.close();
  return tmp;
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, fsConstants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directory fsync is best-effort (unsupported on some platforms).
  }
}

/** Options of {@link atomicWriteConfined}. */
export interface AtomicWriteOptions {
  /**
   * fsync the temp file and the directory, so the new content survives a power cut. Off only for a scratch
   * workspace nobody keeps (a backtest's): the replace stays atomic for readers either way. @default true
   */
  readonly sync?: boolean | undefined;
}

/**
 * Atomically replace `rel` with `content`: write a temp file in the same directory, fsync it, rename it
 * over the target, fsync the directory. A crash leaves either the old file or the new one, never half.
 * A symlink at the target is replaced by the regular file, never written through. Returns the real path written.
 */
export async function atomicWriteConfined(root: string, rel: string, content: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<string> {
  const sync = options.sync !== false;
  const target = await confinedTarget(root, rel);
  const tmp = await writeTemp(target, content, sync);
  try {
    await rename(tmp, target);
  } catch (error) {
    await unlink(tmp).catch(() => {});
    throw error;
  }
  if (sync) await syncDir(dirname(target));
  return target;
}

/**
 * {@link confinedTarget}, synchronously: the same realpath calls (native; one when the file sits in the root) and the
 * same check; the parent directory is created (owner-only) only when it is missing, then resolved again.
 */
function confinedTargetSync(root: string, rel: string): string {
  const abs = joinConfined(root, rel);
  const parent = dirname(abs);
  const inRoot = parent === resolve(root);
  const resolveBoth = (): [string, string] => {
    const realRoot = realpathSync.native(root);
    return [realRoot, inRoot ? realRoot : realpathSync.native(parent)];
  };
  let real: [string, string];
  try {
    real = resolveBoth();
  } catch (error) {
    if (!isMissing(error)) throw error;
    mkdirSync(parent, { recursive: true, mode: PRIVATE_DIR_MODE });
    real = resolveBoth();
  }
  const [realRoot, realParent] = real;
  if (!inside(realRoot, realParent)) throw new SandboxEscapeError(rel, 'its directory is a symlink that leads outside the workspace');
  return join(realParent, abs.slice(parent.length + 1));
}

/**
 * {@link atomicWriteConfined} without fsync, in synchronous calls: the same confinement, the same temp file
 * (`O_EXCL | O_NOFOLLOW`, owner-only) renamed over the target, so readers see the old file or the new one. For a
 * scratch workspace only this process writes (an exclusive one, a backtest's): each call is a few microseconds on a
 * memory file system, where the asynchronous one waits on the thread pool for every one of its seven calls.
 * Returns the real path written and its identity.
 */
export function atomicWriteConfinedSync(root: string, rel: string, content: string | Uint8Array): ConfinedStat {
  const target = confinedTargetSync(root, rel);
  const tmp = join(dirname(target), `.${randomBytes(6).toString('hex')}.${process.pid}.tmp`);
  const fd = openSync(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    try {
      writeFileSync(fd, content);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already renamed or never created.
    }
    throw error;
  }
  return toStat(target, lstatSync(target));
}

/** The identity of a file just written at its real path `realPath` (after {@link atomicWriteConfined}). */
export async function statWritten(realPath: string): Promise<ConfinedStat> {
  return toStat(realPath, await lstat(realPath));
}

/**
 * Atomically create `rel` only if it does not exist (temp file + `link`, which fails on an existing
 * name). Returns `false` and writes nothing when the file (or a symlink of that name) already exists.
 */
export async function createExclusiveConfined(root: string, rel: string, content: string | Uint8Array): Promise<boolean> {
  const target = await confinedTarget(root, rel);
  const tmp = await writeTemp(target, content);
  try {
    await link(tmp, target);
    await syncDir(dirname(target));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/** Rename one confined file to another name in the workspace (same filesystem, atomic). */
export async function renameConfined(root: string, fromRel: string, toRel: string): Promise<void> {
  const from = joinConfined(root, fromRel);
  const to = await confinedTarget(root, toRel);
  const st = await lstat(from);
  if (st.isSymbolicLink()) throw new SandboxEscapeError(fromRel, 'refusing to rename a symlink');
  await rename(from, to);
  await syncDir(dirname(to));
}
