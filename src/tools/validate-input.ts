import { z } from 'zod';
import type { FieldIssue } from '../errors/subclasses';

/** Result of validating tool input. */
export type ValidationResult = { readonly success: true; readonly data: unknown } | { readonly success: false; readonly issues: FieldIssue[] };

/**
 * Validate `args` against `schema`. Models often send `null` for optional fields; when the first parse
 * fails, nulls are dropped wherever the schema accepts `undefined` but not `null`, and the parse is retried.
 */
export function validateToolInput(schema: z.ZodType, args: unknown): ValidationResult {
  const first = schema.safeParse(args === undefined ? {} : args);
  if (first.success) return { success: true, data: first.data };
  if (containsNull(args)) {
    const normalised = dropNullsForOptional(schema, args);
    const second = schema.safeParse(normalised);
    if (second.success) return { success: true, data: second.data };
    return { success: false, issues: toIssues(second.error) };
  }
  return { success: false, issues: toIssues(first.error) };
}

function toIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join('.') : '(input)',
    message: issue.message,
  }));
}

function containsNull(value: unknown, depth = 0): boolean {
  if (value === null) return true;
  if (depth > 16 || typeof value !== 'object') return false;
  return Object.values(value as object).some((v) => containsNull(v, depth + 1));
}

function acceptsUndefinedNotNull(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success && !schema.safeParse(null).success;
}

function dropNullsForOptional(schema: z.ZodType, value: unknown, depth = 0): unknown {
  if (depth > 16 || value === null || typeof value !== 'object') return value;
  const inner = unwrap(schema);
  if (inner instanceof z.ZodObject && !Array.isArray(value)) {
    const shape = inner.shape as Record<string, z.ZodType>;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      // Own keys only: an input key like `valueOf` or `constructor` must not pick up Object.prototype's members.
      const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (v === null && field && acceptsUndefinedNotNull(field)) continue;
      out[key] = field ? dropNullsForOptional(field, v, depth + 1) : v;
    }
    return out;
  }
  if (inner instanceof z.ZodArray && Array.isArray(value)) {
    const element = inner.element as z.ZodType;
    return value.map((v) => dropNullsForOptional(element, v, depth + 1));
  }
  return value;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current: z.ZodType = schema;
  for (let i = 0; i < 8; i++) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodDefault) {
      current = current.unwrap() as z.ZodType;
    } else break;
  }
  return current;
}
