/**
 * `RiskTier`: the finance taxonomy's word for how much an action can cost the person (system-design,
 * `FinanceTaxonomy`: LifecycleStage, AssetClass, RiskTier). Skills, the router and turn limits speak it; the gate
 * enforces it through the permission tier each risk tier maps to, one to one:
 *
 * | risk tier | what the action can do | permission tier |
 * | --- | --- | --- |
 * | `none` | reads, analysis, research, notes: nothing outside the agent changes | `READ_ONLY` |
 * | `low` | a bounded, reviewable change (confirmed once per session) | `CONFIRM_ONCE` |
 * | `high` | moves funds: a trade, a position (each call confirmed) | `ALWAYS_CONFIRM` |
 * | `critical` | irreversible and external: a withdrawal or transfer out (a person acts) | `MANUAL_ONLY` |
 *
 * @module
 */
import { MinaraError } from '../errors/minara-error';
import { isPermissionTier, PermissionTier } from './permission-tier';

/** The risk tiers, lowest first. */
export const RISK_TIERS = ['none', 'low', 'high', 'critical'] as const;
/** One risk tier of the finance taxonomy. */
export type RiskTier = (typeof RISK_TIERS)[number];

const TO_PERMISSION: Readonly<Record<RiskTier, PermissionTier>> = {
  none: PermissionTier.READ_ONLY,
  low: PermissionTier.CONFIRM_ONCE,
  high: PermissionTier.ALWAYS_CONFIRM,
  critical: PermissionTier.MANUAL_ONLY,
};

/** True for a known risk tier. */
export function isRiskTier(value: unknown): value is RiskTier {
  return typeof value === 'string' && (RISK_TIERS as readonly string[]).includes(value);
}

/** The permission tier that enforces a risk tier at the gate (`high` → `ALWAYS_CONFIRM`). */
export function permissionTierForRisk(risk: RiskTier): PermissionTier {
  if (!isRiskTier(risk)) throw new MinaraError('INVALID_ARGUMENT', `permissionTierForRisk: expected one of ${RISK_TIERS.join(', ')}, got ${JSON.stringify(risk)}`);
  return TO_PERMISSION[risk];
}

/** The risk tier of a permission tier (`MANUAL_ONLY` → `critical`). */
export function riskTierOf(tier: PermissionTier): RiskTier {
  if (!isPermissionTier(tier)) throw new MinaraError('INVALID_ARGUMENT', `riskTierOf: expected a PermissionTier (1–4), got ${JSON.stringify(tier)}`);
  return RISK_TIERS[tier - 1]!;
}
