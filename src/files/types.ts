import type { StoredFileRecord } from '../storage/artifact-types';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';

/** 20 MiB: the default upload limit, in line with the providers' multimodal caps. */
export const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;

/** A stored upload as callers see it. */
export interface StoredFile extends StoredFileRecord {
  /** Where the gateway serves it (`/v1/files/<key>`), what a client puts in a message's file part. */
  readonly url: string;
}

/** Input of {@link FileStore.put}. */
export interface PutFileInput {
  readonly userId: string;
  readonly bytes: Uint8Array;
  /** The uploader's file name (kept as metadata; never a path). */
  readonly filename?: string | undefined;
  /** The uploader's content type; the bytes decide (see `sniffContentType`). */
  readonly contentType?: string | undefined;
  readonly sessionId?: string | undefined;
}

/** Options of {@link createFileStore}. */
export interface FileStoreOptions {
  /** Where the bytes go: `<dir>/<user hash>/<key>`. Usually `<dataDir>/files`; never inside the sandbox. */
  readonly dir: string;
  /** Metadata lives in `storage.files`. */
  readonly storage: Storage;
  /** Largest upload in bytes. @default DEFAULT_MAX_FILE_BYTES (20 MiB) */
  readonly maxBytes?: number | undefined;
  /** @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** @default a console logger at `warn` */
  readonly logger?: Logger | undefined;
}

/** Durable uploads: bytes on disk, metadata in storage, every call scoped to a user. */
export interface FileStore {
  /** The upload limit in bytes. */
  readonly maxBytes: number;
  /**
   * Store an upload: `FILE_EMPTY` for zero bytes, `FILE_TOO_LARGE` (naming the limit) past `maxBytes`; the
   * content type is sniffed from the bytes. Returns the stable key.
   */
  put(input: PutFileInput): Promise<StoredFile>;
  /** The metadata, or undefined when the key is unknown or another user's. */
  stat(scope: { readonly userId: string }, key: string): Promise<StoredFile | undefined>;
  /** Metadata and bytes, or undefined when the key is unknown or another user's. */
  read(scope: { readonly userId: string }, key: string): Promise<{ readonly file: StoredFile; readonly bytes: Uint8Array } | undefined>;
  /** The absolute path of a stored file's bytes (for streaming parsers), or undefined. */
  pathOf(scope: { readonly userId: string }, key: string): Promise<string | undefined>;
  list(scope: { readonly userId: string }, query?: { readonly limit?: number | undefined }): Promise<StoredFile[]>;
  /** Remove the bytes and the metadata (explicit deletion, e.g. a GDPR purge); false when not this user's. */
  delete(scope: { readonly userId: string }, key: string): Promise<boolean>;
}
