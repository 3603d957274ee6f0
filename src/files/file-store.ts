import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { MinaraError } from '../errors/minara-error';
import type { StoredFileRecord } from '../storage/artifact-types';
import { createConsoleLogger } from '../util/logger';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../util/private-fs';
import { sniffContentType } from './sniff';
import { DEFAULT_MAX_FILE_BYTES, type FileStore, type FileStoreOptions, type StoredFile } from './types';

/** What a file key looks like: `f-<unix_ms>-<random>.<ext>`. */
export const FILE_KEY = /^f-\d{13}-[a-z0-9]{12}\.[a-z0-9]{1,8}$/;

const toFile = (r: StoredFileRecord): StoredFile => ({ ...r, url: `/v1/files/${r.key}` });

/** `20 MB (20971520 bytes)` */
export function describeBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round((n / (1024 * 1024)) * 10) / 10} MB (${n} bytes)` : `${n} bytes`;
}

/**
 * The local file store: bytes under `<dir>/<sha256(userId)[:16]>/<key>` (written to a temp file, then renamed),
 * metadata in `storage.files`. The key is `f-<unix_ms>-<random>.<ext>` (time-sorted, stable, not a secret:
 * every read is checked against the user). A file is never executed or evaluated; it is a blob.
 *
 * @example
 * ```ts
 * const files = createFileStore({ dir: `${dataDir}/files`, storage });
 * const stored = await files.put({ userId: 'u1', bytes: await readFile('q1.csv'), filename: 'q1.csv', contentType: 'text/csv' });
 * console.log(stored.key, stored.mediaType); // f-1767225600000-….csv text/csv
 * ```
 */
export function createFileStore(options: FileStoreOptions): FileStore {
  if (!options || typeof options.storage?.files?.put !== 'function') throw new MinaraError('CONFIG_INVALID', 'createFileStore: "storage" must be a Storage with the files domain.');
  if (typeof options.dir !== 'string' || options.dir === '') throw new MinaraError('CONFIG_INVALID', 'createFileStore: "dir" must be a directory path.');
  const { storage, maxBytes = DEFAULT_MAX_FILE_BYTES, now = () => new Date() } = options;
  const logger = options.logger ?? createConsoleLogger({ level: 'warn' });
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new MinaraError('CONFIG_INVALID', `createFileStore: "maxBytes" must be a positive integer, got ${String(maxBytes)}.`);
  const root = path.resolve(options.dir);
  const userDir = (userId: string) => createHash('sha256').update(userId).digest('hex').slice(0, 16);
  const abs = (location: string) => {
    const p = path.resolve(root, location);
    if (!p.startsWith(root + path.sep)) throw new MinaraError('STORAGE_ERROR', `file store: location ${JSON.stringify(location)} is outside the store.`);
    return p;
  };
  const checkUser = (op: string, userId: unknown) => {
    if (typeof userId !== 'string' || userId === '') throw new MinaraError('INVALID_ARGUMENT', `${op}: userId must be a non-empty string.`);
  };

  const store: FileStore = {
    maxBytes,
    async put(input) {
      checkUser('fileStore.put', input?.userId);
      if (!(input.bytes instanceof Uint8Array)) throw new MinaraError('INVALID_ARGUMENT', 'fileStore.put: bytes must be a Uint8Array.');
      if (input.bytes.byteLength === 0) throw new MinaraError('FILE_EMPTY', `fileStore.put: ${input.filename ? JSON.stringify(input.filename.slice(0, 100)) : 'the file'} is empty (0 bytes).`);
      if (input.bytes.byteLength > maxBytes) throw new MinaraError('FILE_TOO_LARGE', `fileStore.put: the file is ${describeBytes(input.bytes.byteLength)}; the limit is ${describeBytes(maxBytes)}.`);
      if (input.filename !== undefined && (typeof input.filename !== 'string' || input.filename.length > 255)) throw new MinaraError('INVALID_ARGUMENT', 'fileStore.put: filename must be a string of at most 255 characters.');
      const sniffed = await sniffContentType(input.bytes, { declared: input.contentType, filename: input.filename });
      const declared = input.contentType?.split(';')[0]?.trim().toLowerCase();
      const at = now();
      const key = `f-${String(at.getTime()).padStart(13, '0')}-${[...randomBytes(12)].map((b) => (b % 36).toString(36)).join('')}.${sniffed.ext}`;
      const location = `${userDir(input.userId)}/${key}`;
      const file = abs(location);
      await fsp.mkdir(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
      const tmp = `${file}.${process.pid}.tmp`;
      await fsp.writeFile(tmp, input.bytes, { flag: 'wx', mode: PRIVATE_FILE_MODE });
      await fsp.rename(tmp, file);
      try {
        const record = await storage.files.put({ userId: input.userId }, {
          key, mediaType: sniffed.mediaType, sizeBytes: input.bytes.byteLength, sha256: createHash('sha256').update(input.bytes).digest('hex'), location, createdAt: at.toISOString(),
          ...(declared && declared !== sniffed.mediaType ? { declaredType: declared } : {}),
          ...(input.filename ? { filename: path.basename(input.filename.replace(/\\/g, '/')) } : {}),
          ...(input.sessionId ? { sessionId: input.sessionId } : {}),
        });
        if (declared && declared !== sniffed.mediaType) logger.info('file_type_mismatch', { key, declared, sniffed: sniffed.mediaType });
        return toFile(record);
      } catch (error) {
        await fsp.rm(file, { force: true });
        throw error;
      }
    },
    async stat(scope, key) {
      checkUser('fileStore.stat', scope?.userId);
      if (typeof key !== 'string' || !FILE_KEY.test(key)) return undefined;
      const r = await storage.files.get({ userId: scope.userId }, key);
      return r ? toFile(r) : undefined;
    },
    async pathOf(scope, key) {
      const f = await store.stat(scope, key);
      return f ? abs(f.location) : undefined;
    },
    async read(scope, key) {
      const f = await store.stat(scope, key);
      if (!f) return undefined;
      const bytes = await fsp.readFile(abs(f.location)).catch((error: NodeJS.ErrnoException) => {
        throw new MinaraError('STORAGE_ERROR', `file store: the bytes of ${key} are missing on disk (${error.code ?? 'error'}).`);
      });
      return { file: f, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    },
    async list(scope, query = {}) {
      checkUser('fileStore.list', scope?.userId);
      return (await storage.files.list({ userId: scope.userId }, query)).map(toFile);
    },
    async delete(scope, key) {
      const f = await store.stat(scope, key);
      if (!f) return false;
      await fsp.rm(abs(f.location), { force: true });
      return storage.files.delete({ userId: scope.userId }, key);
    },
  };
  return store;
}
