import { MinaraError } from '../errors/index';
import { sha256Hex } from '../util/canonical-json';
import type { Logger } from '../util/logger';
import { WorkspaceConflictError } from './errors';
import { assertEditableName, type WorkspaceFileName } from './files';
import { atomicWriteConfined, readConfined } from './safe-fs';
import { withWriteLock } from './write-lock';

/** What `readFile` returns. */
export interface WorkspaceFileContent {
  readonly name: WorkspaceFileName;
  /** Whether the file exists. A missing file reads as empty content with `sha256: null`. */
  readonly exists: boolean;
  readonly content: string;
  /** sha256 (hex) of the UTF-8 content; pass it back as `expectedSha256`. `null` when the file is absent. */
  readonly sha256: string | null;
}

/** Options of `writeFile`. */
export interface WorkspaceWriteOptions {
  /**
   * The sha256 the editor loaded (from `readFile`), or `null` to require that the file does not exist yet.
   * When the file on disk no longer matches, nothing is written and a `WorkspaceConflictError` is thrown.
   */
  readonly expectedSha256: string | null;
}

/** What `writeFile` returns. */
export interface WorkspaceWriteResult {
  readonly name: WorkspaceFileName;
  /** sha256 of the content now on disk: the next `expectedSha256`. */
  readonly sha256: string;
  readonly bytes: number;
}

/** Read a whitelisted workspace file for an editor. */
export async function readEditableFile(root: string, name: string, maxBytes: number): Promise<WorkspaceFileContent> {
  const file = assertEditableName(name);
  const read = await readConfined(root, file, maxBytes);
  if (read === undefined) return { name: file, exists: false, content: '', sha256: null };
  return { name: file, exists: true, content: read.content, sha256: sha256Hex(read.content) };
}

/**
 * Write a whitelisted workspace file with sha256 optimistic concurrency. The compare and the atomic
 * rename run under the cross-process write lock, so of two writers holding the same `expectedSha256`
 * exactly one wins and the other gets `WORKSPACE_CONFLICT`.
 */
export async function writeEditableFile(
  root: string,
  name: string,
  content: unknown,
  options: WorkspaceWriteOptions | undefined,
  limits: { readonly maxBytes: number; readonly logger: Logger },
): Promise<WorkspaceWriteResult> {
  const file = assertEditableName(name);
  if (typeof content !== 'string') {
    throw new MinaraError('INVALID_ARGUMENT', `content: expected a string, got ${content === null ? 'null' : typeof content}.`);
  }
  const expected = options?.expectedSha256;
  if (expected !== null && (typeof expected !== 'string' || !/^[0-9a-f]{64}$/i.test(expected))) {
    throw new MinaraError(
      'INVALID_ARGUMENT',
      'expectedSha256: expected the 64-hex sha256 returned by readFile (or null for a file that must not exist yet).',
    );
  }
  const bytes = Buffer.byteLength(content);
  if (bytes > limits.maxBytes) {
    throw new MinaraError('FILE_TOO_LARGE', `content: ${bytes} bytes exceeds the ${limits.maxBytes}-byte limit for ${file}.`);
  }
  return withWriteLock(root, limits.logger, async () => {
    const current = await readConfined(root, file, limits.maxBytes);
    const actual = current === undefined ? null : sha256Hex(current.content);
    if (actual !== (expected === null ? null : expected.toLowerCase())) throw new WorkspaceConflictError(file, expected, actual);
    await atomicWriteConfined(root, file, content);
    return { name: file, sha256: sha256Hex(content), bytes };
  });
}
