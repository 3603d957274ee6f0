import type { Storage } from '../../storage/types';
import type { ToolEntry, ToolHook } from '../../tools/types';
import type { Logger } from '../../util/logger';
import type { FinanceDeps } from '../context';
import { createSafetyAuditHook } from './audit';
import { createConfirmGateHook, createEmergencyReleaseGuard, createTransferSourceGuard } from './confirm-gate';
import { createExposureHook } from './exposure-limit';
import { createIntentCheckHook } from './intent-check';
import { createRiskCapsHook } from './risk-caps';
import { createSlippageHook } from './slippage-limit';
import { createTokenSafetyHook } from './token-safety';

export { SAFETY_AUDIT_TOOL } from './audit';
export { SAFETY_STAGES, type SafetyStage, type StageDecision } from './stage';

/**
 * The finance safety stack in order: the autonomous-transfer guard (part of stage 6, first because it
 * needs no pricing), intent, token safety, exposure, slippage, risk caps, confirm gate
 * (plus the emergency-release guard), and the after-hook that audits every stage's decision.
 */
export function createAuditedHooks(deps: FinanceDeps, isPackTool: (t: ToolEntry) => boolean, storage: Storage, now: () => Date, logger?: Logger): ToolHook[] {
  return [
    createTransferSourceGuard(),
    createIntentCheckHook(deps, isPackTool),
    createTokenSafetyHook(deps, isPackTool),
    createExposureHook(deps, isPackTool),
    createSlippageHook(deps, isPackTool),
    createRiskCapsHook(deps, isPackTool),
    createConfirmGateHook(deps, isPackTool),
    createEmergencyReleaseGuard(isPackTool),
    createSafetyAuditHook(storage, now, logger),
  ];
}
