import { constants, lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { type FileHandle, open, readlink } from 'node:fs/promises';
import path from 'node:path';
import { SandboxEscapeError } from '../errors/subclasses';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../util/private-fs';

/** Options for {@link resolveInSandbox}. */
export interface SandboxOptions {
  /** The sandbox root directory. Created when `create` is true. */
  readonly root: string;
  /** Create the root if it does not exist. @default false */
  readonly create?: boolean | undefined;
}

const MAX_PATH_CHARS = 4096;
const MAX_SEGMENT_CHARS = 255;

/**
 * Resolve a relative path inside the sandbox root, or throw {@link SandboxEscapeError}.
 *
 * 1. Rejects non-strings, empty paths, NUL bytes, backslashes, absolute paths (POSIX, drive letters,
 *    UNC) and any `..` segment, before touching the disk.
 * 2. Resolves the path under the real path of the root.
 * 3. Walks every existing segment, following symlinks, and checks the real path still lies inside the
 *    root; a dangling symlink is refused too.
 * 4. Returns the canonical absolute path (the path need not exist yet; its existing parent must be inside).
 *
 * This is the only resolver file tools may use. Do not write a parallel helper.
 *
 * @example
 * ```ts
 * const file = resolveInSandbox('reports/btc.md', { root: '/srv/minara/sandbox/files' });
 * resolveInSandbox('../etc/passwd', { root }); // throws SandboxEscapeError
 * ```
 */
export function resolveInSandbox(relativePath: string, options: SandboxOptions): string {
  const { root, create = false } = options;
  if (typeof relativePath !== 'string') throw new SandboxEscapeError(String(relativePath), 'the path must be a string');
  if (relativePath.length === 0 || relativePath.trim().length === 0) throw new SandboxEscapeError(relativePath, 'the path is empty');
  if (relativePath.length > MAX_PATH_CHARS) throw new SandboxEscapeError(relativePath.slice(0, 64), `the path is longer than ${MAX_PATH_CHARS} characters`);
  if (relativePath.includes('\0')) throw new SandboxEscapeError(relativePath, 'NUL bytes are not allowed');
  if (relativePath.includes('\\')) throw new SandboxEscapeError(relativePath, 'backslashes are not allowed; use "/"');
  if (path.isAbsolute(relativePath) || /^[a-zA-Z]:/.test(relativePath) || relativePath.startsWith('//')) {
    throw new SandboxEscapeError(relativePath, 'absolute paths are not allowed');
  }
  if (relativePath.startsWith('~')) throw new SandboxEscapeError(relativePath, 'home-directory paths are not allowed');
  const segments = relativePath.normalize('NFC').split('/').filter((s) => s !== '' && s !== '.');
  if (segments.length === 0) throw new SandboxEscapeError(relativePath, 'the path names the sandbox root itself');
  for (const seg of segments) {
    if (seg === '..') throw new SandboxEscapeError(relativePath, '".." segments are not allowed');
    if (seg.length > MAX_SEGMENT_CHARS) throw new SandboxEscapeError(relativePath, `a path segment is longer than ${MAX_SEGMENT_CHARS} characters`);
    if (/[\u0000-\u001f\u007f]/.test(seg)) throw new SandboxEscapeError(relativePath, 'control characters are not allowed');
  }

  if (create) mkdirSync(root, { recursive: true, mode: PRIVATE_DIR_MODE });
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
  } catch {
    throw new SandboxEscapeError(relativePath, `the sandbox root ${JSON.stringify(root)} does not exist`);
  }

  let current = rootReal;
  for (let i = 0; i < segments.length; i++) {
    const next = path.join(current, segments[i]!);
    let stat;
    try {
      stat = lstatSync(next);
    } catch {
      // The rest does not exist yet: what remains is appended under a parent already proven inside.
      const rest = segments.slice(i);
      return path.join(current, ...rest);
    }
    if (stat.isSymbolicLink()) {
      let target: string;
      try {
        target = realpathSync(next);
      } catch {
        throw new SandboxEscapeError(relativePath, 'it goes through a dangling symbolic link');
      }
      if (!isInside(rootReal, target)) throw new SandboxEscapeError(relativePath, 'a symbolic link points outside the sandbox');
      current = target;
    } else {
      current = next;
    }
    if (i < segments.length - 1 && !lstatSync(current).isDirectory()) {
      throw new SandboxEscapeError(relativePath, `"${segments.slice(0, i + 1).join('/')}" is not a directory`);
    }
  }
  if (!isInside(rootReal, current) || current === rootReal) throw new SandboxEscapeError(relativePath, 'it resolves outside the sandbox');
  return current;
}

/** True when `candidate` is `root` or lies beneath it. */
function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Options for {@link openInSandbox}. */
export interface OpenInSandboxOptions extends SandboxOptions {
  /** `fs.constants` open flags; `O_NOFOLLOW` is always added. @default O_RDONLY */
  readonly flags?: number | undefined;
  /** Mode of a created file. @default 0o600 */
  readonly mode?: number | undefined;
}

/**
 * Open a file inside the sandbox and prove, **after** opening, that the descriptor is inside the root. Node
 * has no `openat`/`RESOLVE_BENEATH`, so a directory swapped for a symlink between `resolveInSandbox` and
 * `open` would be followed; here the opened descriptor's own path (`/proc/self/fd/N` on Linux, else the
 * real path re-resolved and matched by device and inode) must lie under the root's real path, or the
 * descriptor is closed unread and unwritten. A regular file with more than one hard link is refused
 * (a hard link makes an outside file look like an inside one). Caller closes the handle.
 *
 * @throws SandboxEscapeError on any escape; the filesystem error (ENOENT, …) when the open itself fails.
 */
export async function openInSandbox(relativePath: string, options: OpenInSandboxOptions): Promise<FileHandle> {
  const abs = resolveInSandbox(relativePath, options);
  const rootReal = realpathSync(options.root);
  const handle = await open(abs, (options.flags ?? constants.O_RDONLY) | constants.O_NOFOLLOW, options.mode ?? PRIVATE_FILE_MODE);
  try {
    const st = await handle.stat();
    let where: string | undefined;
    try {
      where = await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      // No procfs: re-resolve and require the same inode.
      const again = realpathSync(abs);
      const st2 = statSync(again);
      if (st2.dev === st.dev && st2.ino === st.ino) where = again;
    }
    if (where === undefined || !isInside(rootReal, where) || where === rootReal) {
      throw new SandboxEscapeError(relativePath, 'the path changed while it was being opened and now leads outside the sandbox');
    }
    if (st.isFile() && st.nlink > 1) throw new SandboxEscapeError(relativePath, 'the file has more than one hard link, so it may be a file from outside the sandbox');
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}
