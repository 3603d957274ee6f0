/**
 * Private files and directories: what the agent writes (the data directory, the SQLite file with its -wal and
 * -shm, the workspace, exports) is readable by its owner only, whatever the process umask, so other accounts
 * on a shared machine read no transcripts, memories or exports. Creation helpers set the modes explicitly;
 * {@link findLoosePaths} and {@link tightenPaths} are the doctor's check and fix for an existing directory.
 */
import { chmodSync, closeSync, constants, type Dirent, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Mode of a private directory. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of a private file. */
export const PRIVATE_FILE_MODE = 0o600;

/** True where POSIX modes mean something (not on Windows). */
export const POSIX_MODES = process.platform !== 'win32';

/**
 * Create `dir` (and missing parents) with mode 0700. Directories this call creates get exactly 0700 whatever
 * the umask; an existing directory is left as it is (the doctor reports it when it is looser).
 */
export function ensurePrivateDirSync(dir: string): void {
  const abs = path.resolve(dir);
  const first = mkdirSync(abs, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined || !POSIX_MODES) return;
  // mkdir applies the umask (it can only remove bits): set the mode of every directory made here explicitly.
  for (let d = abs; ; d = path.dirname(d)) {
    chmodSync(d, PRIVATE_DIR_MODE);
    if (d === path.resolve(first) || d === path.dirname(d)) break;
  }
}

/**
 * Create an empty file with mode 0600 when it does not exist (never following a symlink); an existing file is
 * left as it is. SQLite gives the -wal and -shm files the mode of the database file, so creating the
 * database this way before opening it keeps all three private.
 */
export function ensurePrivateFileSync(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  try {
    if (POSIX_MODES) fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
}

/** A path more open than it should be. */
export interface LoosePath {
  readonly path: string;
  readonly kind: 'dir' | 'file';
  /** Its mode now, four octal digits (`0755`). */
  readonly mode: string;
  /** The mode the doctor's fix gives it: the owner's bits only (`0700` for a directory, `0600` for a file). */
  readonly expected: string;
}

const octal = (m: number) => m.toString(8).padStart(4, '0');
/** Entries visited per root at most (a data directory with more is checked in part). */
const MAX_ENTRIES = 200_000;

/**
 * Directories and regular files under each root (the root included) that group or others can read, write or
 * enter. Symbolic links are neither followed nor reported; a missing root is skipped. Empty on Windows.
 */
export function findLoosePaths(roots: readonly string[]): LoosePath[] {
  if (!POSIX_MODES) return [];
  const out: LoosePath[] = [];
  const seen = new Set<string>();
  for (const root of roots) {
    let visited = 0;
    const stack = [path.resolve(root)];
    while (stack.length > 0 && visited < MAX_ENTRIES) {
      const p = stack.pop()!;
      if (seen.has(p)) continue;
      seen.add(p);
      visited++;
      let st;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      const isDir = st.isDirectory();
      if (!isDir && !st.isFile()) continue;
      if ((st.mode & 0o077) !== 0) out.push({ path: p, kind: isDir ? 'dir' : 'file', mode: octal(st.mode & 0o7777), expected: octal(st.mode & 0o700) });
      if (!isDir) continue;
      let entries: Dirent[];
      try {
        entries = readdirSync(p, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) if (e.isDirectory() || e.isFile()) stack.push(path.join(p, e.name));
    }
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Remove the group and other bits of each path (`0755` becomes `0700`, `0644` becomes `0600`). The path is
 * opened without following a symbolic link and changed through its descriptor, so a name swapped for a link
 * in between changes nothing else. Returns how many were changed.
 */
export function tightenPaths(loose: readonly LoosePath[]): number {
  let changed = 0;
  for (const l of loose) {
    let fd: number | undefined;
    try {
      fd = openSync(l.path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (l.kind === 'dir' ? (constants.O_DIRECTORY ?? 0) : 0));
      const st = fstatSync(fd);
      if ((!st.isDirectory() && !st.isFile()) || (st.mode & 0o077) === 0) continue;
      fchmodSync(fd, st.mode & 0o700);
      changed++;
    } catch {
      // Gone, a link now, or owned by someone else: the next report names it again.
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return changed;
}
