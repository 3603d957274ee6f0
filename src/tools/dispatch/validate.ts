import { closestMatches } from '../../util/suggest';
import { err } from '../envelope';
import { REJECTED_TOOL_INPUT_KEY, toolInputBoundsProblem } from '../input-bounds';
import type { DispatchOutcome } from '../types';
import { validateToolInput } from '../validate-input';
import { finishCall } from './finish';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * Step 2, validate: the tool exists and is available here, the input is within bounds (depth and size,
 * before any schema walks it) and matches the tool's schema. Sets the tool, its static tier, the validated
 * input and the mode (a fund-moving call without `confirm: true` is a preview). Returns the error outcome, or
 * nothing to go on.
 */
export function validateCall(env: DispatchEnv, call: DispatchCall): Promise<DispatchOutcome> | undefined {
  const { name, args } = call;
  if (typeof name !== 'string' || !env.tools.has(name)) {
    const suggestions = typeof name === 'string' ? closestMatches(name, env.tools.keys()) : [];
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
    return finishCall(env, call, err(`No tool named ${JSON.stringify(name)} is registered.${hint}`, { code: 'TOOL_NOT_FOUND' }), 'error', { auditTier: 0 });
  }
  const tool = env.tools.get(name)!;
  call.tool = tool;
  call.tier = tool.permissionTier;
  if (!env.visible(tool)) return finishCall(env, call, err(`Tool "${name}" is not available in this environment.`, { code: 'TOOL_UNAVAILABLE' }), 'error');

  // Bound depth and size before any schema walks the input (a 5,000-level input overflows recursive code).
  const bounds = toolInputBoundsProblem(args);
  if (bounds !== undefined) {
    call.input = { [REJECTED_TOOL_INPUT_KEY]: bounds };
    return finishCall(env, call, err(`Invalid input for tool "${name}": ${bounds}.`, { code: 'TOOL_INPUT_INVALID', retryable: true }), 'error');
  }
  const validated = validateToolInput(tool.inputSchema, args);
  if (!validated.success) {
    const detail = validated.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    return finishCall(env, call, err(`Invalid input for tool "${name}": ${detail}`, { code: 'TOOL_INPUT_INVALID', retryable: true }), 'error');
  }
  call.input = validated.data;
  call.mode = tool.isFundMoving && (call.input as { confirm?: unknown }).confirm !== true ? 'preview' : 'execute';
  return undefined;
}
