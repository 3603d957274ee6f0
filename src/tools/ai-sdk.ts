// From the AI SDK's own utilities package rather than `ai`: the same `jsonSchema` and `tool` (ai re-exports them),
// without loading the whole SDK when the package is imported (`ai` loads with the first model call).
import { jsonSchema, tool as aiTool } from '@ai-sdk/provider-utils';
import type { JSONValue, Tool } from 'ai';
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { reasonForModel } from '../safety/untrusted';
import type { AuditBatch } from './audit-batch';
import type { ToolEnvelope } from './envelope';
import type { DispatchOutcome, ToolCallContext, ToolRegistry } from './types';

/** Options for {@link toAISDKTools}. */
export interface ToAISDKToolsOptions {
  /** Context for every call; by default the ambient `runInContext` context is used. */
  readonly context?: ToolCallContext | undefined;
  /**
   * Called with every dispatch outcome before the model sees it. Return an envelope to send the model
   * instead (e.g. to append guidance to a result); return nothing to send the outcome's own envelope.
   */
  readonly onResult?: ((toolName: string, outcome: DispatchOutcome) => ToolEnvelope | void) | undefined;
  /**
   * Awaited after each call returns and before the AI SDK receives its result: the runtime journals the call
   * here so a process that dies before the step ends still knows the call ran. Gets the envelope the model
   * will see. A throw becomes the call's error, so log instead of throwing.
   */
  readonly onSettled?: ((call: SettledToolCall) => Promise<void> | void) | undefined;
  /**
   * Tools whose `onSettled` runs inside the dispatch, committed with the call's audit row
   * (`DispatchOptions.withAuditRow`: one SQLite transaction instead of two). It then gets the dispatch's own
   * envelope, before `onResult`, so name only tools whose `onResult` returns nothing; its failures are logged.
   */
  readonly settleWithAuditRow?: ((toolName: string) => boolean) | undefined;
  /** Passed to every dispatch (`DispatchOptions.auditBatch`): side-effect-free calls' rows are held in it. */
  readonly auditBatch?: AuditBatch | undefined;
}

/** What {@link ToAISDKToolsOptions.onSettled} receives. */
export interface SettledToolCall {
  readonly toolName: string;
  readonly toolCallId: string;
  /** The input as the model sent it. */
  readonly input: unknown;
  /** The envelope the model will see. */
  readonly envelope: ToolEnvelope;
}

/** JSON Schemas derived from zod schemas, computed once per tool entry. */
const jsonSchemaCache = new WeakMap<object, Parameters<typeof jsonSchema>[0]>();

function inputJsonSchema(schema: z.ZodType): Parameters<typeof jsonSchema>[0] {
  let cached = jsonSchemaCache.get(schema);
  if (cached === undefined) {
    cached = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Parameters<typeof jsonSchema>[0];
    jsonSchemaCache.set(schema, cached);
  }
  return cached;
}

/**
 * The envelope as the model sees it: an approval proposed after untrusted content names the sources, without the
 * instruction-like passage it read (that is for the person's card); anything else unchanged.
 */
function forModel(envelope: ToolEnvelope): ToolEnvelope {
  if (envelope.ok || envelope.approval?.provenance?.passage === undefined) return envelope;
  const { passage: _passage, ...provenance } = envelope.approval.provenance;
  return { ...envelope, error: reasonForModel(envelope.error), approval: { ...envelope.approval, reason: reasonForModel(envelope.approval.reason), provenance } };
}

/**
 * Turn registry entries into AI SDK tools whose `execute` goes through `registry.dispatch`, so a model
 * call meets the same validation, gate, hooks and audit as any other path. Input validation is left to
 * dispatch (the AI SDK schema only describes the input), so even malformed model input is audited.
 * Each tool returns the envelope object.
 *
 * @example
 * ```ts
 * const tools = toAISDKTools(registry, ['get_price', 'swap_tokens']);
 * const result = streamText({ model, tools, toolOrder: Object.keys(tools), prompt: 'BTC?' });
 * ```
 */
export function toAISDKTools(registry: ToolRegistry, names: readonly string[], options: ToAISDKToolsOptions = {}): Record<string, Tool<unknown, ToolEnvelope>> {
  const out: Record<string, Tool<unknown, ToolEnvelope>> = {};
  for (const name of names) {
    const entry = registry.get(name);
    if (!entry) throw new MinaraError('TOOL_NOT_FOUND', `toAISDKTools: no visible tool named "${name}".`);
    const schema = inputJsonSchema(entry.inputSchema);
    out[name] = aiTool<unknown, ToolEnvelope, Record<string, never>>({
      description: entry.description,
      inputSchema: jsonSchema<unknown>(schema, { validate: (value) => ({ success: true, value }) }),
      execute: async (input, { toolCallId, abortSignal }) => {
        const settle = options.onSettled;
        let settled = false;
        const withAuditRow = settle && options.settleWithAuditRow?.(name) === true
          ? (o: DispatchOutcome) => {
            settled = true;
            return [async () => settle({ toolName: name, toolCallId, input, envelope: o.envelope })];
          }
          : undefined;
        const outcome = await registry.dispatchDetailed(name, input, {
          toolCallId,
          signal: abortSignal,
          context: options.context ?? registry.currentContext(),
          ...(withAuditRow ? { withAuditRow } : {}),
          ...(options.auditBatch ? { auditBatch: options.auditBatch } : {}),
        });
        const envelope = options.onResult?.(name, outcome) ?? outcome.envelope;
        if (!settled) await settle?.({ toolName: name, toolCallId, input, envelope });
        return envelope;
      },
      // What the model reads back: the envelope, less the instruction-like passage an approval's provenance carries
      // for the person's card (the model is told which sources it read, never the attacker's sentence again).
      toModelOutput: ({ output }) => ({ type: 'json', value: forModel(output) as unknown as JSONValue }),
    });
  }
  return out;
}
