/**
 * Signed checkpoints of the audit chain, written outside the database (the "signed tree head" of Certificate
 * Transparency, RFC 9162 §4.10, for a hash chain): `{ seq, head, keyedFrom, at, instance }` signed with Ed25519.
 * A checkpoint is taken every N rows, every T seconds and at close, off the append path (the append only counts);
 * it is one head read, one signature and one line per sink. `verifyAuditTrail` then checks the chain against
 * the newest valid checkpoint, so a truncated tail with its head rolled back, or a history recomputed, shows.
 */
import { constants, promises as fsp } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { sign, verify, type KeyObject } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import type { Logger } from '../util/logger';
import type { Storage } from '../storage/types';
import { canonicalJson } from '../util/canonical-json';
import { auditKeyId, parseAuditPublicKey, type AuditKeys } from './audit-keys';

const CHECKPOINT_CONTEXT = 'minara-audit-checkpoint/v1\n';

/** What a checkpoint states (everything its signature covers). */
export interface AuditCheckpoint {
  readonly v: 1;
  readonly type: 'checkpoint';
  /** Which instance took it (`MINARA_INSTANCE_ID`, else the host name). */
  readonly instance: string;
  /** The chain position (seq) it covers: every row up to it. */
  readonly seq: number;
  /** The hash of the row at `seq` (the chain head then). */
  readonly head: string;
  /** Where keyed links begin (absent when none were keyed yet). */
  readonly keyedFrom?: number | undefined;
  /** When it was taken (ISO 8601). */
  readonly at: string;
  /** The signing key's id (`AuditKeys.keyId`). */
  readonly keyId: string;
}

/** A checkpoint with its Ed25519 signature (base64url over the context string and the canonical JSON). */
export interface SignedAuditCheckpoint extends AuditCheckpoint {
  readonly sig: string;
}

/** Sign a checkpoint. */
export function signAuditCheckpoint(body: Omit<AuditCheckpoint, 'v' | 'type' | 'keyId'>, keys: Pick<AuditKeys, 'signingKey' | 'keyId'>): SignedAuditCheckpoint {
  const full: AuditCheckpoint = { v: 1, type: 'checkpoint', ...body, keyId: keys.keyId };
  return { ...full, sig: sign(null, Buffer.from(CHECKPOINT_CONTEXT + canonicalJson(full)), keys.signingKey).toString('base64url') };
}

/**
 * Parse and check one checkpoint line against the public key. Returns the checkpoint, or why it is refused (a
 * field changed, a line forged without the private key, another key, not JSON).
 */
export function verifyAuditCheckpoint(line: string | SignedAuditCheckpoint, publicKey: string | KeyObject): { ok: true; checkpoint: SignedAuditCheckpoint } | { ok: false; reason: string } {
  const key = parseAuditPublicKey(publicKey);
  let value: unknown = line;
  if (typeof line === 'string') {
    try {
      value = JSON.parse(line);
    } catch {
      return { ok: false, reason: 'not JSON' };
    }
  }
  const c = value as Partial<SignedAuditCheckpoint> | null;
  if (!c || typeof c !== 'object' || c.v !== 1 || c.type !== 'checkpoint' || !Number.isSafeInteger(c.seq) || typeof c.head !== 'string' || typeof c.sig !== 'string' || typeof c.at !== 'string') {
    return { ok: false, reason: 'not a checkpoint (expected v 1, type "checkpoint", seq, head, at, sig)' };
  }
  if (c.keyId !== auditKeyId(key)) return { ok: false, reason: `signed with another key (key id ${String(c.keyId)}, expected ${auditKeyId(key)})` };
  const { sig, ...body } = c as SignedAuditCheckpoint;
  const good = verify(null, Buffer.from(CHECKPOINT_CONTEXT + canonicalJson(body)), key, Buffer.from(sig, 'base64url'));
  return good ? { ok: true, checkpoint: c as SignedAuditCheckpoint } : { ok: false, reason: 'the Ed25519 signature does not match (the line was edited or forged)' };
}

/**
 * Where checkpoints go. `write` appends one; `read` (when the sink can be read back) returns every line written,
 * oldest first, for `verifyAuditTrail`. A fleet gives each instance its own file, or an HTTP endpoint, or a host
 * sink that puts each line into object storage (write-once bucket).
 */
export interface AuditCheckpointSink {
  /** A name for logs and reports (`file:/path`, `http:https://…`). */
  readonly name: string;
  write(checkpoint: SignedAuditCheckpoint): Promise<void>;
  read?(): Promise<string[]>;
}

/**
 * An append-only JSONL file (one signed checkpoint per line), created 0600, opened with `O_APPEND | O_NOFOLLOW`
 * and synced (`fdatasync`) once per checkpoint, never per row. The default sink: `<dataDir>/audit-checkpoints.jsonl`.
 * Keep a copy off the machine too: someone who can write the data directory can also cut this file.
 */
export function createFileCheckpointSink(options: { readonly path: string }): AuditCheckpointSink {
  if (typeof options?.path !== 'string' || options.path === '') throw new MinaraError('INVALID_ARGUMENT', 'createFileCheckpointSink: path must be a non-empty string');
  const file = path.resolve(options.path);
  return {
    name: `file:${file}`,
    async write(checkpoint) {
      await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      const fd = await fsp.open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
      try {
        await fd.write(`${JSON.stringify(checkpoint)}\n`);
        await fd.datasync();
      } finally {
        await fd.close();
      }
    },
    async read() {
      try {
        return (await fsp.readFile(file, 'utf8')).split('\n').filter((l) => l.trim() !== '');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
    },
  };
}

/** Options of {@link createHttpCheckpointSink}. */
export interface HttpCheckpointSinkOptions {
  /** Where each checkpoint is POSTed as JSON. `https://`, or `http://` on loopback only. */
  readonly url: string;
  /** Extra headers (an `authorization` for the collector). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch | undefined;
  /** @default 10000 */
  readonly timeoutMs?: number | undefined;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** POST each checkpoint as JSON to a collector (a fleet's log service), which keeps them where the database cannot reach. */
export function createHttpCheckpointSink(options: HttpCheckpointSinkOptions): AuditCheckpointSink {
  let url: URL;
  try {
    url = new URL(options?.url);
  } catch {
    throw new MinaraError('INVALID_ARGUMENT', `createHttpCheckpointSink: url must be an absolute URL, got ${JSON.stringify(options?.url)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw new MinaraError('INVALID_ARGUMENT', `createHttpCheckpointSink: url must be https:// (http:// only on loopback), got ${url.protocol}//${url.host}`);
  }
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    name: `http:${url.origin}${url.pathname}`,
    async write(checkpoint) {
      const res = await doFetch(url, {
        method: 'POST', headers: { 'content-type': 'application/json', ...options.headers }, body: JSON.stringify(checkpoint), signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new MinaraError('PROVIDER_ERROR', `audit checkpoint sink ${url.origin}${url.pathname}: HTTP ${res.status}`);
    },
  };
}

/** Options of {@link createAuditCheckpointer}. */
export interface AuditCheckpointerOptions {
  readonly storage: Pick<Storage, 'audit'>;
  readonly keys: Pick<AuditKeys, 'signingKey' | 'keyId'>;
  readonly sinks: readonly AuditCheckpointSink[];
  /** @default MINARA_INSTANCE_ID, else the host name */
  readonly instance?: string | undefined;
  /** Take one after this many rows. @default 1000 */
  readonly everyRows?: number | undefined;
  /** Take one after this many seconds when rows were appended since the last (0: no timer). @default 60 */
  readonly everySeconds?: number | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
}

/** A running checkpointer. */
export interface AuditCheckpointer {
  /** Take a checkpoint now (even with no new rows) and write it to every sink; resolves with it. */
  checkpoint(): Promise<SignedAuditCheckpoint>;
  /** Count one appended row (the storage's `onAppend`); schedules a checkpoint after `everyRows`, off the append. */
  noteAppend(seq: number): void;
  /** The newest checkpoint this process wrote. */
  readonly last: SignedAuditCheckpoint | undefined;
  /** Stop the timer and take a last checkpoint if rows came since the newest. */
  close(): Promise<void>;
}

/** The instance name checkpoints carry. */
export function defaultAuditInstance(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.MINARA_INSTANCE_ID?.trim() || hostname();
}

/**
 * Take signed checkpoints every `everyRows` rows, every `everySeconds` seconds and at close. A sink that fails is
 * logged and the others still get the line; `checkpoint()` rejects only when every sink failed.
 */
export function createAuditCheckpointer(options: AuditCheckpointerOptions): AuditCheckpointer {
  const { storage, keys, sinks, now = () => new Date(), logger } = options;
  const everyRows = options.everyRows ?? 1000;
  const everySeconds = options.everySeconds ?? 60;
  if (!Number.isSafeInteger(everyRows) || everyRows < 1) throw new MinaraError('CONFIG_INVALID', `createAuditCheckpointer: everyRows must be a positive integer, got ${JSON.stringify(everyRows)}`);
  if (typeof everySeconds !== 'number' || !Number.isFinite(everySeconds) || everySeconds < 0) throw new MinaraError('CONFIG_INVALID', `createAuditCheckpointer: everySeconds must be a number ≥ 0, got ${JSON.stringify(everySeconds)}`);
  if (!Array.isArray(sinks) || sinks.length === 0) throw new MinaraError('CONFIG_INVALID', 'createAuditCheckpointer: sinks must name at least one sink');
  const instance = options.instance ?? defaultAuditInstance();
  let last: SignedAuditCheckpoint | undefined;
  let pending = 0;
  let running: Promise<SignedAuditCheckpoint> | undefined;
  let scheduled = false;
  let closed = false;

  const take = async (): Promise<SignedAuditCheckpoint> => {
    pending = 0;
    const head = await storage.audit.head();
    const cp = signAuditCheckpoint({ instance, seq: head.seq, head: head.hash, ...(head.keyedFrom !== undefined ? { keyedFrom: head.keyedFrom } : {}), at: now().toISOString() }, keys);
    const results = await Promise.allSettled(sinks.map((s) => s.write(cp)));
    results.forEach((r, i) => {
      if (r.status === 'rejected') logger?.warn('audit checkpoint: a sink failed', { sink: sinks[i]!.name, error: r.reason instanceof Error ? r.reason.message : String(r.reason) });
    });
    if (results.every((r) => r.status === 'rejected')) throw new MinaraError('STORAGE_ERROR', `audit checkpoint: every sink failed (${sinks.map((s) => s.name).join(', ')})`);
    last = cp;
    return cp;
  };
  const run = (): Promise<SignedAuditCheckpoint> => {
    // One at a time: a checkpoint asked for while one runs follows it.
    const next = (running ?? Promise.resolve(undefined)).catch(() => undefined).then(take);
    running = next;
    void next.finally(() => {
      if (running === next) running = undefined;
    }).catch(() => undefined);
    return next;
  };
  const background = () => {
    run().catch((error: unknown) => logger?.warn('audit checkpoint failed', { error: error instanceof Error ? error.message : String(error) }));
  };
  const timer = everySeconds > 0 ? setInterval(() => {
    if (pending > 0) background();
  }, everySeconds * 1000) : undefined;
  timer?.unref();

  return {
    checkpoint: run,
    noteAppend() {
      pending++;
      if (pending >= everyRows && !scheduled && !closed) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          background();
        });
      }
    },
    get last() {
      return last;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
      const head = await storage.audit.head();
      if (last === undefined || last.seq !== head.seq || last.head !== head.hash) await run();
    },
  };
}
