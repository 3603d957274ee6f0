/**
 * What an approval will do, in numbers, before the person answers: the call's own preview (a fund-moving
 * tool dispatched with the same input and no `confirm`, through the registry: nothing moves), shown by
 * `formatApproval` as "Buy $50.00 of ETH at ~$3,012, fee $0.30, …". Any other tool has no preview and is never
 * run to make one.
 */
import { createToolCallContext, type MinaraApp, parseEnvelope } from '@minara/agent';

/** The preview's data, or why the checks would refuse the call now; `{}` when there is none. */
export async function previewApproval(app: MinaraApp, call: { toolName: string; input: unknown; sessionId: string }): Promise<{ preview?: unknown; refused?: string }> {
  const tool = app.tools.get(call.toolName);
  if (!tool?.isFundMoving || typeof call.input !== 'object' || call.input === null || Array.isArray(call.input)) return {};
  try {
    const context = createToolCallContext({ sessionId: call.sessionId, source: 'user' });
    const envelope = parseEnvelope(await app.tools.dispatch(call.toolName, { ...(call.input as Record<string, unknown>), confirm: false }, { context }));
    return envelope.ok ? { preview: envelope.data } : { refused: envelope.error };
  } catch {
    // The question is still asked from the arguments alone.
    return {};
  }
}
