import { MinaraError } from '../errors/minara-error';
import type { CapabilitySwitchRecord } from '../storage/control-types';
import type { Storage } from '../storage/types';
import type { CapabilitiesApi } from '../tools/types';

const USER_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * Capability switches: an operator turns one user's tool set off (`disable('trade', { userId: 'alice' })`) or back
 * on. Kept in storage, so every process sharing the database enforces it at its next dispatch; enforced by the
 * registry's dispatch (the one gate), for every source and mode. Each change appends an audit row
 * (`capability.disable` / `capability.enable`, source `operator`).
 */
export function createCapabilitySwitches(options: { readonly storage: Storage; readonly now: () => Date; readonly hasToolSet: (name: string) => boolean }): CapabilitiesApi {
  const { storage, now, hasToolSet } = options;
  const check = (where: string, toolSet: unknown, userId: unknown) => {
    if (typeof userId !== 'string' || !USER_ID.test(userId)) throw new MinaraError('INVALID_ARGUMENT', `capabilities.${where}: "userId" must be 1–128 letters, digits or . _ : @ -.`);
    if (typeof toolSet !== 'string' || !hasToolSet(toolSet)) throw new MinaraError('INVALID_ARGUMENT', `capabilities.${where}: "toolSet" names an unknown tool set ${JSON.stringify(toolSet)}.`);
  };
  async function change(toolSet: string, scope: { userId: string; reason?: string | undefined; by?: string | undefined }, enabled: boolean): Promise<boolean> {
    const where = enabled ? 'enable' : 'disable';
    check(where, toolSet, scope?.userId);
    if (scope.reason !== undefined && (typeof scope.reason !== 'string' || scope.reason.length > 500)) throw new MinaraError('INVALID_ARGUMENT', `capabilities.${where}: "reason" must be a string of at most 500 characters.`);
    const at = now().toISOString();
    const changed = await storage.controls.setCapability({ userId: scope.userId, toolSet, enabled, at, reason: scope.reason, by: scope.by ?? 'sdk' });
    if (changed) {
      await storage.audit.append({
        at, toolName: `capability.${where}`, tier: 0, source: 'operator', decision: 'allowed', durationMs: 0,
        argsJson: JSON.stringify({ userId: scope.userId, toolSet, ...(scope.reason !== undefined ? { reason: scope.reason } : {}), by: scope.by ?? 'sdk' }),
      });
    }
    return changed;
  }
  return {
    disable: (toolSet, scope) => change(toolSet, scope, false),
    enable: (toolSet, scope) => change(toolSet, scope, true),
    list: (query = {}): Promise<CapabilitySwitchRecord[]> => storage.controls.listDisabledCapabilities(query),
  };
}
