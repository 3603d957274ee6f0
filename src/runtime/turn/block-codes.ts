/** Envelope codes that mean policy refused the call (as opposed to the tool failing). */
export const BLOCK_CODES = new Set([
  'TOOL_BLOCKED', 'TOOL_SET_NOT_ALLOWED', 'RISK_CEILING_EXCEEDED', 'MANUAL_ONLY_AUTONOMOUS', 'GRANT_REQUIRED', 'EMERGENCY_STOP',
  'REPEATED_BLOCKED_CALL', 'APPROVAL_DENIED', 'APPROVAL_INVALID', 'APPROVAL_EXPIRED', 'APPROVAL_ALREADY_USED', 'APPROVAL_NOT_FOUND',
  'APPROVAL_NOT_DECIDED', 'SKILL_ACTIVATION_REFUSED', 'SANDBOX_ESCAPE', 'CIRCUIT_BREAKER_OPEN', 'UNTRUSTED_CONTENT',
]);

/** A readable message for anything thrown. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
