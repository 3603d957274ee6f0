/**
 * Features the configuration turns on that need something else (a model, a key, a secret): each one that lacks
 * what it needs starts disabled, and says so in exactly one warning naming what is missing, instead of stopping
 * the app (a missing model key must not stop `minara` or `minara serve`: everything but the model works without
 * one). `createApp` logs the warnings once at start and keeps the list on `app.disabledFeatures`, which
 * `minara doctor` reports. Also the soft-delete retention, settable through `createApp` and the environment.
 */
import type { EnvVars } from '../llm/resolve-model';
import { ConfigError } from '../errors/subclasses';

/** A feature the configuration turned on that started disabled because something it needs is missing. */
export interface DisabledFeature {
  /** The feature, e.g. `dreaming`. */
  readonly feature: 'dreaming' | 'memory-consolidation' | 'role-reflection' | 'personalization-rebuild' | 'embeddings' | 'live-trading' | 'shadow-trading' | 'delivery-webhook' | 'heartbeat';
  /** The setting that turned it on, e.g. `WORKSPACE_DREAM_ENABLED=1`. */
  readonly setting: string;
  /** What it needs and does not have. */
  readonly missing: string;
  /** The warning logged once at start: what is off, why, and how to turn it on. */
  readonly message: string;
}

const TRUE = /^(1|true|yes|on)$/i;
const word = (v: string | undefined) => (v ?? '').trim().toLowerCase();
const MODEL = 'a model (MINARA_MODEL with its provider key, or the `model` option)';

/** What the gates look at, besides the environment. */
export interface FeatureGateInput {
  readonly env: EnvVars;
  /** A model is configured (`app.modelStatus.configured`). */
  readonly modelConfigured: boolean;
  /** The host passed an embedder (or `false`): `EMBEDDING_PROVIDER` is then not read. */
  readonly embedderGiven: boolean;
  /** The finance pack has a live trading provider available (`MINARA_API_KEY` set), or the host gave one. */
  readonly tradingProviderAvailable: boolean;
  /** The host gave `background.heartbeatEveryMs` (the environment's value is then not used). */
  readonly heartbeatGiven: boolean;
  /** The host gave a dreaming model through its own workspace (`options.workspace`): dreaming is the host's. */
  readonly workspaceGiven: boolean;
}

/** Every feature the environment turns on that lacks what it needs, in a fixed order. */
export function disabledFeatures(input: FeatureGateInput): DisabledFeature[] {
  const { env } = input;
  const out: DisabledFeature[] = [];
  const add = (feature: DisabledFeature['feature'], setting: string, missing: string, effect: string) =>
    out.push({ feature, setting, missing, message: `${setting} is set but ${missing} is missing: ${effect}` });
  if (!input.modelConfigured) {
    if (!input.workspaceGiven && TRUE.test((env.WORKSPACE_DREAM_ENABLED ?? '').trim())) add('dreaming', `WORKSPACE_DREAM_ENABLED=${env.WORKSPACE_DREAM_ENABLED}`, MODEL, 'dreaming stays off.');
    if (TRUE.test((env.MEMORY_CONSOLIDATION_ENABLED ?? '').trim())) add('memory-consolidation', `MEMORY_CONSOLIDATION_ENABLED=${env.MEMORY_CONSOLIDATION_ENABLED}`, MODEL, 'the LLM fact consolidator stays off (facts are still deduplicated exactly).');
    if (word(env.MINARA_ROLE_REFLECTION) === 'enabled') add('role-reflection', 'MINARA_ROLE_REFLECTION=enabled', MODEL, 'closed trades are not reflected into lessons ("minara learning reflect" once a model is configured).');
    if (word(env.MINARA_PERSONALIZATION_REBUILD) === 'enabled') add('personalization-rebuild', 'MINARA_PERSONALIZATION_REBUILD=enabled', MODEL, 'the personalization rebuild job stays off.');
    const heartbeat = (env.MINARA_HEARTBEAT_EVERY ?? '').trim();
    if (!input.heartbeatGiven && heartbeat !== '' && !/^0+(ms|s|m|h|d)?$/i.test(heartbeat)) add('heartbeat', `MINARA_HEARTBEAT_EVERY=${heartbeat}`, MODEL, 'heartbeat turns stay off.');
  }
  if (!input.embedderGiven && word(env.EMBEDDING_PROVIDER) === 'openai' && !env.EMBEDDING_API_KEY && !env.OPENAI_API_KEY) {
    add('embeddings', 'EMBEDDING_PROVIDER=openai', 'EMBEDDING_API_KEY (or OPENAI_API_KEY)', 'memory search runs on full text only.');
  }
  const mode = word(env.MINARA_TRADING_MODE);
  if (!input.tradingProviderAvailable) {
    if (mode === 'shadow') add('shadow-trading', 'MINARA_TRADING_MODE=shadow', 'MINARA_API_KEY (the live adapter whose market data and quotes shadow mode uses)', 'shadow mode runs against the SIMULATED market (offline, generated prices): a try-out, not a comparison with the real market.');
    else if (mode === 'live') add('live-trading', 'MINARA_TRADING_MODE=live', 'MINARA_API_KEY', 'trading stays on paper.');
    else if (mode === '' && word(env.MINARA_TRADING) === 'live') add('live-trading', 'MINARA_TRADING=live', 'MINARA_API_KEY', 'trading stays on paper.');
  }
  if ((env.MINARA_DELIVERY_WEBHOOK_URL ?? '').trim() !== '' && !env.MINARA_DELIVERY_WEBHOOK_SECRET) {
    add('delivery-webhook', 'MINARA_DELIVERY_WEBHOOK_URL', 'MINARA_DELIVERY_WEBHOOK_SECRET (the HMAC key the receiver verifies, at least 16 characters)', 'answers of autonomous turns are not posted to the webhook (nothing unsigned is sent).');
  }
  return out;
}

/** The default soft-delete retention, in days. */
export const DEFAULT_SOFT_DELETE_RETENTION_DAYS = 30;

/**
 * The soft-delete retention in days: the option, else `MEMORY_SOFT_DELETE_RETENTION_DAYS`, else 30. A number of
 * days from 0 (purge soft-deleted memories at the next purge) to 36,500; anything else is a `ConfigError`
 * naming the field.
 */
export function softDeleteRetentionDays(option: number | undefined, env: EnvVars): number {
  const raw = env.MEMORY_SOFT_DELETE_RETENTION_DAYS;
  if (option === undefined && (raw === undefined || raw.trim() === '')) return DEFAULT_SOFT_DELETE_RETENTION_DAYS;
  const value = option ?? (/^\s*\d+(\.\d+)?\s*$/.test(raw ?? '') ? Number(raw) : Number.NaN);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 36_500) {
    const source = option !== undefined ? `softDeleteRetentionDays: expected a number of days from 0 to 36500, got ${String(option)}` : `softDeleteRetentionDays (MEMORY_SOFT_DELETE_RETENTION_DAYS): expected a number of days from 0 to 36500, got ${JSON.stringify(raw)}`;
    throw new ConfigError(source, ['softDeleteRetentionDays']);
  }
  return value;
}
