import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { activationRefusal, type SkillActivationResult, type SkillSession } from './session';
import { ASSET_CLASSES, LIFECYCLE_STAGES } from './taxonomy';
import type { SignalContext } from './types';

/** zod schema of a {@link SignalContext} (webhook payloads, cron configs). */
export const signalContextSchema = z.object({
  source: z.enum(['user', 'cron', 'webhook', 'workflow', 'subagent']),
  signal_id: z.string().min(1).max(200),
  asset: z.object({ symbol: z.string().min(1).max(40), asset_class: z.enum(ASSET_CLASSES).optional() }).optional(),
  severity: z.enum(['info', 'warn', 'critical']).optional(),
  preload_skills: z.array(z.string().min(1)).max(32).optional(),
  suggested_stages: z.array(z.enum(LIFECYCLE_STAGES)).optional(),
  trace_id: z.string().min(1).max(200).optional(),
});

/**
 * Validate a signal payload; throws `INVALID_ARGUMENT` naming each bad field.
 *
 * @example
 * ```ts
 * const signal = parseSignalContext(JSON.parse(body));
 * ```
 */
export function parseSignalContext(value: unknown): SignalContext {
  const r = signalContextSchema.safeParse(value);
  if (!r.success) {
    const detail = r.error.issues.map((i) => `${i.path.join('.') || '(signal)'}: ${i.message}`).join('; ');
    throw new MinaraError('INVALID_ARGUMENT', `Invalid signal context: ${detail}`);
  }
  return r.data as SignalContext;
}

/** What a signal preload did. */
export interface SignalPreloadResult {
  /** The loaded set after the preload (unchanged when nothing could be preloaded). */
  readonly activation?: SkillActivationResult | undefined;
  /** Preload ids skipped, with why (unknown, hidden, refused from an autonomous source). */
  readonly skipped: ReadonlyArray<{ readonly id: string; readonly reason: string }>;
}

/**
 * Preload a signal's `preload_skills` without a model call. Best effort: unknown ids and sandbox-class
 * skills refused from an autonomous source are skipped and reported; the rest replace the loaded set.
 * A preload loads playbook prose only; every tool still hits the tier gate at dispatch.
 */
export function applySignalPreload(
  session: SkillSession,
  signal: SignalContext,
  options: { operatorAuthored?: boolean | undefined } = {},
): SignalPreloadResult {
  const skipped: Array<{ id: string; reason: string }> = [];
  const ok: string[] = [];
  for (const id of signal.preload_skills ?? []) {
    const skill = session.registry.get(id);
    if (!skill) {
      const hidden = session.registry.hidden().find((h) => h.id === id);
      skipped.push({ id, reason: hidden ? `unavailable (${hidden.reason})` : 'unknown skill id' });
      continue;
    }
    const refusal = activationRefusal(skill, signal.source, options.operatorAuthored === true);
    if (refusal) skipped.push({ id, reason: refusal });
    else ok.push(id);
  }
  if (ok.length === 0) return { skipped };
  const activation = session.activate(ok, {
    source: signal.source,
    operatorAuthored: options.operatorAuthored === true,
    via: 'signal',
    ...(signal.trace_id !== undefined ? { traceId: signal.trace_id } : {}),
  });
  return { activation, skipped };
}

/** The signal block for the dynamic tail of the prompt (stable key order). */
export function renderSignalBlock(signal: SignalContext): string {
  const lines = ['## Signal', `source: ${signal.source}`, `signal_id: ${signal.signal_id}`];
  if (signal.asset) lines.push(`asset: ${signal.asset.symbol}${signal.asset.asset_class ? ` (${signal.asset.asset_class})` : ''}`);
  if (signal.severity) lines.push(`severity: ${signal.severity}`);
  if (signal.suggested_stages?.length) lines.push(`suggested_stages: ${signal.suggested_stages.join(', ')}`);
  if (signal.trace_id) lines.push(`trace_id: ${signal.trace_id}`);
  return lines.join('\n');
}
