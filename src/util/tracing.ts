import { type Attributes, type Span, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * The package's OpenTelemetry tracer. Without a tracer provider registered by the host (`@opentelemetry/sdk-node`
 * or any SDK), `@opentelemetry/api` hands out a no-op tracer: spans cost next to nothing and go nowhere. No
 * exporter is bundled. Attributes never carry inputs, outputs or message text (they may hold secrets): only names,
 * ids, tiers, decisions, outcomes and token counts.
 */
export const tracer = trace.getTracer('@minara/agent');

/** Run `fn` in a span named `name`; an exception ends the span with an error status and is rethrown. */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
