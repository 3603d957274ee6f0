import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { MinaraError } from '../errors/minara-error';

/** Bytes of a generated approval key. */
export const APPROVAL_KEY_BYTES = 32;

/** Where {@link resolveApprovalKey} found the key. */
export interface ResolvedApprovalKey {
  readonly key: Uint8Array;
  /** `env`: `MINARA_APPROVAL_KEY`; `file`: an existing key file; `created`: a key file made now. */
  readonly source: 'env' | 'file' | 'created';
  /** The key file, when one was read or created. */
  readonly path?: string | undefined;
}

/** Options of {@link resolveApprovalKey}. */
export interface ResolveApprovalKeyOptions {
  /** The environment (`MINARA_APPROVAL_KEY`, `MINARA_APPROVAL_KEY_FILE`, `NODE_ENV`, `MINARA_ENV`). @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** The agent's data directory; the default key file sits beside it (not inside it). */
  readonly dataDir: string;
  /**
   * Production mode: never create a key file, only use one that exists or the env var.
   * @default true when `NODE_ENV` or `MINARA_ENV` is `production`
   */
  readonly production?: boolean | undefined;
}

/** True when `NODE_ENV` or `MINARA_ENV` is `production`. */
export function isProductionEnv(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env.NODE_ENV === 'production' || env.MINARA_ENV === 'production';
}

/**
 * Parse an approval key given as 64+ hex characters or base64 of 32+ bytes.
 * @throws MinaraError `CONFIG_INVALID` naming what was expected (never echoing the value).
 */
export function parseApprovalKey(text: string, label = 'MINARA_APPROVAL_KEY'): Uint8Array {
  const t = text.trim();
  let bytes: Uint8Array | undefined;
  if (/^[0-9a-fA-F]+$/.test(t) && t.length % 2 === 0) bytes = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) bytes = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
  if (!bytes || bytes.length < APPROVAL_KEY_BYTES) {
    throw new MinaraError('CONFIG_INVALID', `${label}: expected at least ${APPROVAL_KEY_BYTES} random bytes as hex (64+ characters) or base64 (e.g. \`openssl rand -hex 32\`).`);
  }
  return new Uint8Array(bytes);
}

/** The default key file for a data directory: a sibling file, so copying the data directory does not copy the key. */
export function defaultApprovalKeyPath(dataDir: string): string {
  const abs = path.resolve(dataDir);
  return path.join(path.dirname(abs), `${path.basename(abs)}.approval-key`);
}

function readKeyFile(file: string): Uint8Array {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new MinaraError('CONFIG_INVALID', `Approval key file ${file} is not a regular file.`);
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      throw new MinaraError('CONFIG_INVALID', `Approval key file ${file} is readable by other users (mode ${(st.mode & 0o777).toString(8)}); run \`chmod 600 ${file}\`.`);
    }
    return parseApprovalKey(readFileSync(fd, 'utf8'), `approval key file ${file}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The key that signs approvals, kept outside the storage it protects. In order: `MINARA_APPROVAL_KEY`
 * (hex or base64), the file named by `MINARA_APPROVAL_KEY_FILE`, or the default file beside the data
 * directory (`<dataDir>.approval-key`), created on first run with mode 0600 unless in production mode.
 * A key file readable by group or others is refused, like an SSH key.
 *
 * @throws MinaraError `CONFIG_INVALID` when the key is malformed, a key file is unsafe, or production mode
 *   has neither the variable nor an existing file.
 */
export function resolveApprovalKey(options: ResolveApprovalKeyOptions): ResolvedApprovalKey {
  const env = options.env ?? process.env;
  const production = options.production ?? isProductionEnv(env);
  if (env.MINARA_APPROVAL_KEY) return { key: parseApprovalKey(env.MINARA_APPROVAL_KEY), source: 'env' };
  const file = env.MINARA_APPROVAL_KEY_FILE ? path.resolve(env.MINARA_APPROVAL_KEY_FILE) : defaultApprovalKeyPath(options.dataDir);
  try {
    return { key: readKeyFile(file), source: 'file', path: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (MinaraError.isInstance(error)) throw error;
      throw new MinaraError('CONFIG_INVALID', `Approval key file ${file} cannot be read: ${(error as Error).message}`);
    }
  }
  if (production) {
    throw new MinaraError(
      'CONFIG_INVALID',
      `Production mode needs an approval key outside the database: set MINARA_APPROVAL_KEY (e.g. \`openssl rand -hex 32\`) or create ${file} (mode 0600).`,
    );
  }
  const key = randomBytes(APPROVAL_KEY_BYTES);
  // Written to a private temp file, then linked into place: two processes starting together agree on one
  // key (link fails for the loser, which reads the winner's), and no one ever reads a half-written file.
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, `${key.toString('hex')}\n`);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { key: readKeyFile(file), source: 'file', path: file };
    throw new MinaraError('CONFIG_INVALID', `Could not create the approval key file ${file}: ${(error as Error).message}`);
  } finally {
    rmSync(tmp, { force: true });
  }
  return { key: new Uint8Array(key), source: 'created', path: file };
}
