import type { ArtifactKind, ArtifactQuery, ArtifactScope, NewArtifact, StoredFileRecord } from './artifact-types';
import { checkId, checkLimit, checkRecord, invalidArgument } from './sqlite/checks';

/** Input checks of the `artifacts` and `files` domains, shared by every engine (same code, same message). */

const KINDS: ReadonlySet<string> = new Set<ArtifactKind>(['chart', 'report', 'spreadsheet']);

/** The scope's user id. */
export function checkScope(operation: string, scope: unknown): ArtifactScope {
  if (typeof scope !== 'object' || scope === null) throw invalidArgument(operation, 'scope must be { userId }');
  checkId(operation, 'scope.userId', (scope as { userId?: unknown }).userId);
  return scope as ArtifactScope;
}

/** A kind of artifact. */
export function checkKind(operation: string, field: string, kind: unknown): ArtifactKind {
  if (typeof kind !== 'string' || !KINDS.has(kind)) throw invalidArgument(operation, `${field} must be one of ${[...KINDS].join(', ')}, got ${JSON.stringify(kind)}`);
  return kind as ArtifactKind;
}

export function checkNewArtifact(operation: string, a: NewArtifact): void {
  checkRecord(operation, 'artifact', a, { strings: ['id', 'kind', 'createdAt'], optionalStrings: ['title', 'sessionId', 'turnId'] });
  checkKind(operation, 'artifact.kind', a.kind);
  if (a.id.length > 128) throw invalidArgument(operation, `artifact.id must be at most 128 characters, got ${a.id.length}`);
}

export function checkArtifactQuery(operation: string, query: ArtifactQuery): number {
  if (query.kind !== undefined) checkKind(operation, 'query.kind', query.kind);
  return checkLimit(operation, query.limit, 50);
}

export function checkFileRecord(operation: string, r: Omit<StoredFileRecord, 'userId'>): void {
  checkRecord(operation, 'record', r, {
    strings: ['key', 'mediaType', 'sha256', 'location', 'createdAt'],
    numbers: ['sizeBytes'],
    optionalStrings: ['declaredType', 'filename', 'sessionId'],
  });
  if (!Number.isSafeInteger(r.sizeBytes) || r.sizeBytes < 0) throw invalidArgument(operation, `record.sizeBytes must be a non-negative integer, got ${String(r.sizeBytes)}`);
}
