/**
 * The `artifacts` and `files` storage domains: rows only. The bytes of an uploaded file stay on disk (or in
 * an object store) and the rendered files of an artifact under `<dataDir>/artifacts/<id>/`; storage holds the
 * metadata and the artifact payload. Every read and write takes a scope, and an id of another user reads as
 * absent. Two small interfaces so that other engines (Postgres, …) can implement them.
 */

/** The tenant an artifact or a file belongs to. */
export interface ArtifactScope {
  readonly userId: string;
}

/** The three artifact types; they share one row shape (`chat_artifacts`). */
export type ArtifactKind = 'chart' | 'report' | 'spreadsheet';

/** One status path: `running` (inserted) → `completed` (payload stored) or `error` (message stored). */
export type ArtifactStatus = 'running' | 'completed' | 'error';

/** One stored artifact. */
export interface ArtifactRecord {
  /** `x-…` for charts and spreadsheets, `r-…` for reports (the URI scheme tells the type). */
  readonly id: string;
  readonly userId: string;
  readonly kind: ArtifactKind;
  readonly status: ArtifactStatus;
  readonly title?: string | undefined;
  /** The session and turn that made it, when known. */
  readonly sessionId?: string | undefined;
  readonly turnId?: string | undefined;
  /** The payload as JSON, once `completed` (chart: `{ spec, vega }`, report: `{ markdown }`, spreadsheet: `{ csvContent }`). */
  readonly dataJson?: string | undefined;
  /** Why it failed, once `error`. */
  readonly error?: string | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An artifact to insert (status `running`). */
export interface NewArtifact {
  readonly id: string;
  readonly kind: ArtifactKind;
  readonly title?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly turnId?: string | undefined;
  readonly createdAt: string;
}

/** Filter of {@link ArtifactStorage.list}; newest first. */
export interface ArtifactQuery {
  readonly sessionId?: string | undefined;
  readonly kind?: ArtifactKind | undefined;
  /** @default 50 */
  readonly limit?: number | undefined;
}

/** The `chat_artifacts` rows of each user. */
export interface ArtifactStorage {
  /** Insert a `running` artifact; an id already stored (for any user) is a StorageError. */
  insert(scope: ArtifactScope, artifact: NewArtifact): Promise<ArtifactRecord>;
  /** `running` → `completed` with the payload; undefined when the id is not this user's or not running. */
  markCompleted(scope: ArtifactScope, id: string, patch: { readonly dataJson: string; readonly at: string }): Promise<ArtifactRecord | undefined>;
  /** `running` → `error` with the message; undefined when the id is not this user's or not running. */
  markError(scope: ArtifactScope, id: string, patch: { readonly error: string; readonly at: string }): Promise<ArtifactRecord | undefined>;
  /** The artifact, or undefined when it does not exist or is another user's. */
  get(scope: ArtifactScope, id: string): Promise<ArtifactRecord | undefined>;
  list(scope: ArtifactScope, query?: ArtifactQuery): Promise<ArtifactRecord[]>;
}

/** Metadata of one uploaded file; the bytes live outside storage. */
export interface StoredFileRecord {
  /** The stable key written into chat messages (`f-<unix_ms>-<random>.<ext>`). */
  readonly key: string;
  readonly userId: string;
  /** The content type sniffed from the bytes (or the declared one for text formats the sniffer cannot tell). */
  readonly mediaType: string;
  /** What the uploader declared, when it differs from `mediaType`. */
  readonly declaredType?: string | undefined;
  readonly filename?: string | undefined;
  readonly sizeBytes: number;
  /** Hex sha256 of the bytes. */
  readonly sha256: string;
  /** Where the bytes are, relative to the file store's root (or an object-store key). */
  readonly location: string;
  readonly sessionId?: string | undefined;
  readonly createdAt: string;
}

/** The file metadata of each user. */
export interface FileStorage {
  /** Record a file; a key already stored (for any user) is a StorageError. */
  put(scope: ArtifactScope, record: Omit<StoredFileRecord, 'userId'>): Promise<StoredFileRecord>;
  /** The file's metadata, or undefined when it does not exist or is another user's. */
  get(scope: ArtifactScope, key: string): Promise<StoredFileRecord | undefined>;
  /** Newest first. @default limit 50 */
  list(scope: ArtifactScope, query?: { readonly limit?: number | undefined }): Promise<StoredFileRecord[]>;
  /** Remove the metadata row; false when it was not this user's or did not exist. */
  delete(scope: ArtifactScope, key: string): Promise<boolean>;
}
