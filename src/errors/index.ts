export { ERROR_CODES, type MinaraErrorCode } from './codes';
export { MinaraError, type MinaraErrorOptions } from './minara-error';
export {
  ApprovalError,
  ConfigError,
  type FieldIssue,
  SandboxEscapeError,
  StorageError,
  ToolCallBlockedError,
  ToolInputError,
  ToolNotFoundError,
} from './subclasses';
