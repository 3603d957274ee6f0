import { createRequire } from 'node:module';
import type * as Otel from '@opentelemetry/api';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';

// Loaded with the first span, not with the package. On Node the package's entry is CommonJS (no `import`
// condition), so this is the same instance an `import` gives a host that registers its SDK.
let otel: typeof Otel | undefined;
const api = (): typeof Otel => (otel ??= createRequire(import.meta.url)('@opentelemetry/api') as typeof Otel);
let cached: Tracer | undefined;

/**
 * The package's OpenTelemetry tracer. Without a tracer provider registered by the host (`@opentelemetry/sdk-node`
 * or any SDK), `@opentelemetry/api` hands out a no-op tracer: spans cost next to nothing and go nowhere. No
 * exporter is bundled. Attributes never carry inputs, outputs or message text (they may hold secrets): only names,
 * ids, tiers, decisions, outcomes and token counts.
 */
export function tracer(): Tracer {
  cached ??= api().trace.getTracer('@minara/agent');
  return cached;
}

let noopProvider: unknown;
let noopSpan: Span | undefined;

/**
 * True while no host has registered a tracer provider (the global provider still delegates to the API's no-op one).
 * Checked per span, so a provider registered later is used from its next span on.
 */
function tracingOff(): boolean {
  const o = api();
  noopProvider ??= new o.ProxyTracerProvider().getDelegate();
  const provider = o.trace.getTracerProvider() as { getDelegate?: () => unknown };
  return typeof provider.getDelegate === 'function' && provider.getDelegate() === noopProvider;
}

/**
 * Run `fn` in a span named `name`; an exception ends the span with an error status and is rethrown. Without a
 * registered tracer provider `fn` gets a non-recording span directly (what the no-op tracer would hand it,
 * without the context switch each span cost every turn and tool call).
 */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  if (tracingOff()) return fn((noopSpan ??= api().trace.wrapSpanContext(api().INVALID_SPAN_CONTEXT)));
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: api().SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
