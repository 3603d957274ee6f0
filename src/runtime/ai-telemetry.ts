import { type TracingChannel, tracingChannel } from 'node:diagnostics_channel';
import type { TelemetryOptions } from 'ai';

/** One model call's settings with the AI SDK's telemetry off: it builds, redacts and publishes no events. */
const TELEMETRY_OFF: TelemetryOptions = Object.freeze({ isEnabled: false });

/** The AI SDK's global integrations, as its `registerTelemetry` keeps them (a test fails the day that changes). */
interface AiSdkTelemetryGlobals {
  readonly AI_SDK_TELEMETRY_INTEGRATIONS?: readonly unknown[];
}

let cached: { readonly name: string; readonly channel: TracingChannel } | undefined;

/**
 * The telemetry settings of a turn's model call. The host's own `telemetry` option is passed as given. Without it,
 * the AI SDK's default stands while anything can receive its events (an integration registered with the SDK's
 * `registerTelemetry`, or a subscriber on its tracing channel, `channelName`); when nothing can, telemetry is off
 * for the call, so the SDK does not build and redact events nobody reads (about 0.13 ms of a three-step turn,
 * docs/runtime.md). Checked at every call: an integration or subscriber added later is served from the next call.
 * An SDK release that names no tracing channel (`channelName` undefined) keeps its default: the runtime cannot tell
 * whether anything listens there.
 */
export function turnTelemetry(host: TelemetryOptions | undefined, channelName: string | undefined): TelemetryOptions | undefined {
  if (host !== undefined || typeof channelName !== 'string') return host;
  const integrations = (globalThis as AiSdkTelemetryGlobals).AI_SDK_TELEMETRY_INTEGRATIONS;
  if (integrations !== undefined && integrations.length > 0) return undefined;
  if (cached?.name !== channelName) cached = { name: channelName, channel: tracingChannel(channelName) };
  // `hasSubscribers` is missing where the runtime lacks it: then the SDK's default, as the SDK itself decides.
  return cached.channel.hasSubscribers === false ? TELEMETRY_OFF : undefined;
}
