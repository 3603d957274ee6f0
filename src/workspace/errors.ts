import { MinaraError } from '../errors/index';

/**
 * A workspace write lost an optimistic-concurrency race: the file's sha256 on disk is no longer the one
 * the editor loaded. Nothing was written. Gateways map it to HTTP 409 ("overwrite or reload").
 */
export class WorkspaceConflictError extends MinaraError {
  /** The workspace file name. */
  readonly fileName: string;
  /** The sha256 the caller expected (`null`: expected the file to be absent). */
  readonly expectedSha256: string | null;
  /** The sha256 on disk (`null`: the file is absent). */
  readonly actualSha256: string | null;
  constructor(fileName: string, expectedSha256: string | null, actualSha256: string | null) {
    super(
      'WORKSPACE_CONFLICT',
      `${fileName} changed since it was read (expected sha256 ${expectedSha256 ?? '(absent)'}, found ${
        actualSha256 ?? '(absent)'
      }); reload it and apply the edit again, or overwrite with the new sha256.`,
    );
    this.name = 'WorkspaceConflictError';
    this.fileName = fileName;
    this.expectedSha256 = expectedSha256;
    this.actualSha256 = actualSha256;
  }
}
