/**
 * Input validation for the memory store. Every check throws a `MinaraError` naming the field and what was
 * expected before anything is written, so a rejected call stores nothing.
 *
 * Control characters are REJECTED, not stripped: C0 controls other than tab and newline, DEL, C1 controls
 * and unpaired surrogates. `\r\n` and lone `\r` are normalised to `\n` first.
 */
import { ConfigError } from '../errors/subclasses';
import { MinaraError } from '../errors/minara-error';
import type { MemoryScope } from '../storage/memory-types';

/** Category and source names: lower snake case, 1–40 chars. */
export const CATEGORY_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;
/** Default content cap (UTF-8 bytes). */
export const DEFAULT_MAX_CONTENT_BYTES = 64 * 1024;
/** Serialised metadata cap (UTF-8 bytes). */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Largest `limit` any call accepts. */
export const MAX_LIMIT = 1000;
/** Profile key pattern and value cap. */
export const PROFILE_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
export const MAX_PROFILE_VALUE_BYTES = 4096;

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;

/** In `u` mode a paired surrogate is one code point, so this matches unpaired ones only. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function invalid(message: string): MinaraError {
  return new MinaraError('MEMORY_INVALID', message);
}

/** Check and normalise a store scope; throws ConfigError naming the bad field. */
export function validateScope(scope: unknown): MemoryScope {
  if (typeof scope !== 'object' || scope === null) throw new ConfigError('createMemoryStore: `scope` is required ({ userId, agentId? })', ['scope']);
  const { userId, agentId } = scope as { userId?: unknown; agentId?: unknown };
  if (typeof userId !== 'string' || userId.trim().length === 0) {
    throw new ConfigError('createMemoryStore: `scope.userId` must be a non-empty string', ['scope.userId']);
  }
  if (userId.length > 256) throw new ConfigError('createMemoryStore: `scope.userId` must be at most 256 characters', ['scope.userId']);
  if (agentId !== undefined && (typeof agentId !== 'string' || agentId.trim().length === 0 || agentId.length > 256)) {
    throw new ConfigError('createMemoryStore: `scope.agentId` must be a non-empty string of at most 256 characters when given', ['scope.agentId']);
  }
  return agentId === undefined ? { userId } : { userId, agentId: agentId as string };
}

/** Validate text that will be stored: string, well-formed, no control characters. Returns it with `\r\n` → `\n`. */
export function validateText(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalid(`\`${field}\` must be a string, got ${value === null ? 'null' : typeof value}`);
  const text = value.replace(/\r\n?/g, '\n');
  if (LONE_SURROGATE.test(text)) throw invalid(`\`${field}\` contains an unpaired surrogate (invalid UTF-16)`);
  const bad = CONTROL.exec(text);
  if (bad !== null) {
    const code = (bad[0].codePointAt(0) ?? 0).toString(16).padStart(4, '0');
    throw invalid(`\`${field}\` contains a control character U+${code.toUpperCase()} at offset ${bad.index}; only tab and newline are allowed`);
  }
  return text;
}

/** Validate memory content: non-empty after trim, at most `maxBytes` UTF-8 bytes. Returns the trimmed text. */
export function validateContent(value: unknown, maxBytes: number): string {
  const text = validateText('content', value).trim();
  if (text.length === 0) throw invalid('`content` must not be empty');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new MinaraError('MEMORY_TOO_LARGE', `\`content\` is ${bytes} bytes; the limit is ${maxBytes} bytes (maxContentBytes)`);
  }
  return text;
}

/** Validate a category (or source) name against {@link CATEGORY_PATTERN}. */
export function validateName(field: string, value: unknown): string {
  if (typeof value !== 'string' || !CATEGORY_PATTERN.test(value)) {
    throw invalid(`\`${field}\` must match ${String(CATEGORY_PATTERN)} (lower snake case, 1-40 chars), got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Validate metadata: a plain JSON object of at most {@link MAX_METADATA_BYTES} bytes. Returns a JSON-clean copy. */
export function validateMetadata(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('`metadata` must be a plain JSON object');
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw invalid(`\`metadata\` is not JSON-serialisable: ${error instanceof Error ? error.message : String(error)}`);
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_METADATA_BYTES) throw new MinaraError('MEMORY_TOO_LARGE', `\`metadata\` is ${bytes} bytes serialised; the limit is ${MAX_METADATA_BYTES} bytes`);
  return JSON.parse(json) as Record<string, unknown>;
}

/** Validate a `limit`: a positive integer ≤ {@link MAX_LIMIT}; `undefined` yields `fallback`. */
export function validateLimit(value: unknown, fallback: number, field = 'limit'): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_LIMIT) {
    throw invalid(`\`${field}\` must be an integer from 1 to ${MAX_LIMIT}, got ${typeof value === 'number' ? String(value) : JSON.stringify(value)}`);
  }
  return value;
}

/** Validate a memory id: a positive safe integer. */
export function validateId(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw invalid(`\`id\` must be a positive integer, got ${String(value)}`);
  return value;
}

/** Validate a profile key and value. */
export function validateProfileEntry(key: unknown, value?: unknown): { key: string; value: string } {
  if (typeof key !== 'string' || !PROFILE_KEY_PATTERN.test(key)) {
    throw invalid(`profile \`key\` must match ${String(PROFILE_KEY_PATTERN)}, got ${JSON.stringify(key)}`);
  }
  if (value === undefined) return { key, value: '' };
  const text = validateText('value', value).trim();
  if (text.length === 0) throw invalid('profile `value` must not be empty');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_PROFILE_VALUE_BYTES) throw new MinaraError('MEMORY_TOO_LARGE', `profile \`value\` is ${bytes} bytes; the limit is ${MAX_PROFILE_VALUE_BYTES} bytes`);
  return { key, value: text };
}
