import { MinaraError } from '../../errors/minara-error';
import { StorageError } from '../../errors/subclasses';
import type { ApprovalStatus, NewMessage } from '../types';

/**
 * Input checks shared by both engines (SQLite and in-memory), so bad input fails with the same code and
 * message everywhere. Engine-neutral: this file must not import better-sqlite3 or sqlite-vec.
 */

const APPROVAL_STATUSES: ReadonlySet<string> = new Set<ApprovalStatus>(['pending', 'approved', 'denied', 'expired', 'executed']);
const MESSAGE_ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'tool', 'system']);

/** A bad argument to a storage method: names the operation and the field. */
export function invalidArgument(operation: string, message: string): MinaraError {
  return new MinaraError('INVALID_ARGUMENT', `${operation}: ${message}`);
}

/** The record addressed by id does not exist. */
export function notFound(operation: string, what: string, id: string, hint = ''): MinaraError {
  return new MinaraError('NOT_FOUND', `${operation}: ${what} ${JSON.stringify(id)} does not exist${hint}`);
}

/** A create with an id that is already stored. */
export function duplicateId(operation: string, what: string, id: string, cause?: unknown): StorageError {
  return new StorageError(operation, `${what} with id ${JSON.stringify(id)} already exists`, { cause });
}

/** `limit` as a positive integer, or `fallback` when absent. */
export function checkLimit(operation: string, limit: number | undefined, fallback: number): number;
export function checkLimit(operation: string, limit: number | undefined, fallback?: undefined): number | undefined;
export function checkLimit(operation: string, limit: number | undefined, fallback?: number): number | undefined {
  if (limit === undefined) return fallback;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw invalidArgument(operation, `limit must be a positive integer, got ${String(limit)}`);
  }
  return limit;
}

/** A non-empty string id. */
export function checkId(operation: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidArgument(operation, `${field} must be a non-empty string, got ${describe(value)}`);
  }
  return value;
}

/** A known approval status. */
export function checkStatus(operation: string, field: string, value: unknown): ApprovalStatus {
  if (typeof value !== 'string' || !APPROVAL_STATUSES.has(value)) {
    throw invalidArgument(operation, `${field} must be one of ${[...APPROVAL_STATUSES].join(', ')}, got ${describe(value)}`);
  }
  return value as ApprovalStatus;
}

/** A non-empty list of known approval statuses. */
export function checkStatuses(operation: string, field: string, value: unknown): readonly ApprovalStatus[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) {
    throw invalidArgument(operation, `${field} must be a status or a non-empty list of statuses, got ${describe(value)}`);
  }
  return list.map((s, i) => checkStatus(operation, `${field}[${i}]`, s));
}

/** A grant `kind`: `session` or `stored`. */
export function checkGrantKind(operation: string, field: string, kind: unknown): void {
  if (kind !== 'session' && kind !== 'stored') {
    throw invalidArgument(operation, `${field} must be "session" or "stored", got ${describe(kind)}`);
  }
}

/** Messages to append: an array of `{ role, json, createdAt }` with valid fields. */
export function checkMessages(operation: string, messages: unknown): readonly NewMessage[] {
  if (!Array.isArray(messages)) throw invalidArgument(operation, `messages must be an array, got ${describe(messages)}`);
  messages.forEach((m: unknown, i) => {
    if (typeof m !== 'object' || m === null) throw invalidArgument(operation, `messages[${i}] must be an object, got ${describe(m)}`);
    const { role, json, createdAt, turnId } = m as Record<string, unknown>;
    if (typeof role !== 'string' || !MESSAGE_ROLES.has(role)) {
      throw invalidArgument(operation, `messages[${i}].role must be one of ${[...MESSAGE_ROLES].join(', ')}, got ${describe(role)}`);
    }
    if (typeof json !== 'string') throw invalidArgument(operation, `messages[${i}].json must be a JSON string, got ${describe(json)}`);
    if (typeof createdAt !== 'string') throw invalidArgument(operation, `messages[${i}].createdAt must be an ISO timestamp string, got ${describe(createdAt)}`);
    if (turnId !== undefined && typeof turnId !== 'string') throw invalidArgument(operation, `messages[${i}].turnId must be a string, got ${describe(turnId)}`);
  });
  return messages as readonly NewMessage[];
}

/** Required and optional fields of a record, by type, for {@link checkRecord}. */
export interface RecordShape {
  /** Required, non-empty strings. */
  readonly strings?: readonly string[];
  /** Required strings that may be empty. */
  readonly texts?: readonly string[];
  readonly numbers?: readonly string[];
  readonly optionalStrings?: readonly string[];
}

/** Check a record argument field by field; the error names the first bad field. */
export function checkRecord(operation: string, name: string, value: unknown, shape: RecordShape): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(operation, `${name} must be an object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  for (const field of shape.strings ?? []) {
    if (typeof record[field] !== 'string' || record[field] === '') {
      throw invalidArgument(operation, `${name}.${field} must be a non-empty string, got ${describe(record[field])}`);
    }
  }
  for (const field of shape.texts ?? []) {
    if (typeof record[field] !== 'string') {
      throw invalidArgument(operation, `${name}.${field} must be a string, got ${describe(record[field])}`);
    }
  }
  for (const field of shape.numbers ?? []) {
    if (typeof record[field] !== 'number' || !Number.isFinite(record[field])) {
      throw invalidArgument(operation, `${name}.${field} must be a finite number, got ${describe(record[field])}`);
    }
  }
  for (const field of shape.optionalStrings ?? []) {
    if (record[field] !== undefined && typeof record[field] !== 'string') {
      throw invalidArgument(operation, `${name}.${field} must be a string when given, got ${describe(record[field])}`);
    }
  }
}

/** The fields every audit entry needs. */
export const AUDIT_ENTRY_SHAPE: RecordShape = {
  strings: ['at', 'toolName', 'source', 'decision'],
  texts: ['argsJson'],
  numbers: ['tier', 'durationMs'],
  optionalStrings: ['sessionId', 'traceId', 'toolCallId', 'approvalId', 'code', 'reason', 'mode'],
};

/** The fields every approval record needs. */
export const APPROVAL_SHAPE: RecordShape = {
  strings: ['id', 'toolName', 'toolCallId', 'inputHash', 'source', 'status', 'createdAt', 'expiresAt', 'signature'],
  texts: ['inputJson', 'reason'],
  numbers: ['tier'],
  optionalStrings: ['sessionId', 'traceId', 'decidedAt', 'decisionReason', 'executedAt', 'decisionSignature'],
};

/** The fields every grant record needs. */
export const GRANT_SHAPE: RecordShape = {
  strings: ['id', 'kind', 'toolName', 'createdAt'],
  optionalStrings: ['sessionId', 'expiresAt', 'revokedAt', 'note', 'userId', 'createdBy'],
};

/** The optional fields a stored grant adds (user, tools, tool sets, caps): shared by the engines. */
export function checkGrantExtras(operation: string, grant: Record<string, unknown>): void {
  for (const field of ['tools', 'toolSets', 'sources'] as const) {
    const v = grant[field];
    if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === ''))) {
      throw invalidArgument(operation, `grant.${field} must be an array of non-empty strings when given`);
    }
  }
  for (const field of ['capPerCallUsd', 'capPerDayUsd'] as const) {
    const v = grant[field];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
      throw invalidArgument(operation, `grant.${field} must be a finite number ≥ 0 when given, got ${describe(v)}`);
    }
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return value === null ? 'null' : typeof value === 'object' ? 'an object' : String(value);
}
