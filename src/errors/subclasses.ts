import type { MinaraErrorCode } from './codes';
import { MinaraError, type MinaraErrorOptions } from './minara-error';

/** Invalid configuration or options, raised early at construction. Carries the bad field paths. */
export class ConfigError extends MinaraError {
  readonly fields: readonly string[];
  constructor(message: string, fields: readonly string[] = [], options?: MinaraErrorOptions) {
    super('CONFIG_INVALID', message, options);
    this.name = 'ConfigError';
    this.fields = fields;
  }
}

/** A tool call was blocked by policy (tier gate, hook, tool set, emergency stop). */
export class ToolCallBlockedError extends MinaraError {
  readonly toolName: string;
  constructor(
    toolName: string,
    message: string,
    code: MinaraErrorCode = 'TOOL_BLOCKED',
    options?: MinaraErrorOptions,
  ) {
    super(code, message, options);
    this.name = 'ToolCallBlockedError';
    this.toolName = toolName;
  }
}

/** No tool is registered under the name; `suggestions` lists close matches. */
export class ToolNotFoundError extends MinaraError {
  readonly toolName: string;
  readonly suggestions: readonly string[];
  constructor(toolName: string, suggestions: readonly string[] = []) {
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
    super('TOOL_NOT_FOUND', `No tool named "${toolName}" is registered.${hint}`);
    this.name = 'ToolNotFoundError';
    this.toolName = toolName;
    this.suggestions = suggestions;
  }
}

/** One field that failed validation. */
export interface FieldIssue {
  /** Dotted path of the field (`order.size`), or `(input)` for the whole value. */
  readonly path: string;
  /** What was wrong and what was expected. */
  readonly message: string;
}

/** Tool input failed schema validation; `issues` names each bad field. */
export class ToolInputError extends MinaraError {
  readonly toolName: string;
  readonly issues: readonly FieldIssue[];
  constructor(toolName: string, issues: readonly FieldIssue[]) {
    const detail = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    super('TOOL_INPUT_INVALID', `Invalid input for tool "${toolName}": ${detail}`);
    this.name = 'ToolInputError';
    this.toolName = toolName;
    this.issues = issues;
  }
}

/** A path would resolve outside the sandbox root. */
export class SandboxEscapeError extends MinaraError {
  readonly path: string;
  constructor(path: string, reason: string) {
    super('SANDBOX_ESCAPE', `Path ${JSON.stringify(path)} is not allowed: ${reason}.`);
    this.name = 'SandboxEscapeError';
    this.path = path;
  }
}

/** An approval could not be used: unknown, forged, expired, replayed, denied, or bound to other input. */
export class ApprovalError extends MinaraError {
  readonly approvalId: string;
  constructor(
    code: Extract<
      MinaraErrorCode,
      | 'APPROVAL_NOT_FOUND'
      | 'APPROVAL_INVALID'
      | 'APPROVAL_EXPIRED'
      | 'APPROVAL_ALREADY_USED'
      | 'APPROVAL_DENIED'
      | 'APPROVAL_NOT_DECIDED'
    >,
    approvalId: string,
    message: string,
  ) {
    super(code, message);
    this.name = 'ApprovalError';
    this.approvalId = approvalId;
  }
}

/** The storage engine failed. `operation` names what was being done. */
export class StorageError extends MinaraError {
  readonly operation: string;
  constructor(
    operation: string,
    message: string,
    options?: MinaraErrorOptions & { code?: Extract<MinaraErrorCode, 'STORAGE_ERROR' | 'STORAGE_BUSY' | 'STORAGE_UNAVAILABLE' | 'MIGRATION_FAILED'> },
  ) {
    super(options?.code ?? 'STORAGE_ERROR', `${operation}: ${message}`, options);
    this.name = 'StorageError';
    this.operation = operation;
  }
}
