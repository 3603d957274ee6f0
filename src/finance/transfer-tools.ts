import { MinaraError } from '../errors/minara-error';
import { isAutonomousSource, PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import { err } from '../tools/envelope';
import type { ToolEntry } from '../tools/types';
import { packOrderFacts } from './order-facts';
import { clientOrderId, type FinanceDeps } from './context';
import { buildPreview } from './preview';
import { emergencyStopInput, transferInput, withdrawInput } from './schemas';
import { executed } from './trade-tools';

/**
 * Funds leaving the account (tool set `transfer`, fund-moving, MANUAL_ONLY): `transfer_token` to an
 * external address and `withdraw_funds`. The tier gate refuses them from cron, webhook and workflow
 * sources; the pack's transfer guard refuses those sources even a preview.
 */
export function createTransferTools(deps: FinanceDeps): ToolEntry[] {
  return [
    defineTool({
      name: 'transfer_token',
      toolSet: 'transfer',
      description: 'Send a token to an external address (MANUAL_ONLY; preview first)',
      inputSchema: transferInput,
      permissionTier: PermissionTier.MANUAL_ONLY,
      isFundMoving: true,
      orderFacts: packOrderFacts(deps, 'transfer_token'),
      timeoutMs: 30_000,
      preview: (i, ctx) => buildPreview(deps, 'transfer_token', i, ctx),
      execute: async (i, ctx) =>
        executed(
          await deps.trading.executeTransfer(
            { asset: i.asset.toUpperCase(), amount: i.amount, to: i.to, kind: 'transfer', ...(i.chain ? { chain: i.chain } : {}), clientOrderId: clientOrderId('transfer_token', ctx, i) },
            { signal: ctx.signal },
          ),
        ),
    }),
    defineTool({
      name: 'withdraw_funds',
      toolSet: 'transfer',
      description: 'Withdraw funds to a registered destination (MANUAL_ONLY; preview first)',
      inputSchema: withdrawInput,
      permissionTier: PermissionTier.MANUAL_ONLY,
      isFundMoving: true,
      orderFacts: packOrderFacts(deps, 'withdraw_funds'),
      timeoutMs: 30_000,
      preview: (i, ctx) => buildPreview(deps, 'withdraw_funds', i, ctx),
      execute: async (i, ctx) =>
        executed(
          await deps.trading.executeTransfer(
            { asset: i.asset.toUpperCase(), amount: i.amount, to: i.destination, kind: 'withdraw', clientOrderId: clientOrderId('withdraw_funds', ctx, i) },
            { signal: ctx.signal },
          ),
        ),
    }),
  ];
}

/**
 * `emergency_stop` (tool set `system`): `engage` and `status` are READ_ONLY and run for anyone, even while
 * the stop is engaged; `release` is MANUAL_ONLY (computed by `tierFor`): it needs an explicit approval on
 * every call and is refused from autonomous sources. The tool acts on the stop of the user the call acts for
 * (so one tenant or an MCP host never halts everyone); a call with no user (the host's own, single-user) acts on
 * the global stop. Releasing the global stop is the operator's (`minara stop --global --release`, the SDK): the
 * tool never releases it for a user. The tool is flagged `emergencyStopControl`, so the engaged stop does not
 * block its own release; the tier still does. The handler also refuses a release without a consumed approval,
 * so it fails closed even without the pack's hooks.
 */
export function createEmergencyStopTool(deps: FinanceDeps): ToolEntry {
  return defineTool({
    name: 'emergency_stop',
    toolSet: 'system',
    description: "Engage the user's emergency stop (halts all of their trading at once), check it, or request its release",
    inputSchema: emergencyStopInput,
    permissionTier: PermissionTier.READ_ONLY,
    tierFor: (i) => (i.action === 'release' ? PermissionTier.MANUAL_ONLY : PermissionTier.READ_ONLY),
    emergencyStopControl: true,
    timeoutMs: 10_000,
    execute: async (i, ctx) => {
      const stop = deps.emergencyStop();
      const userId = ctx.call.userId;
      // The turn's user acts on their own stop, at the user's level: the stop refuses releasing an operator's.
      const scope = userId !== undefined ? { userId, by: userId, actor: 'user' as const } : undefined;
      if (i.action === 'status') return stop.status(scope);
      if (i.action === 'engage') {
        await stop.engage(i.reason ?? `engaged by the emergency_stop tool (${ctx.call.source} source)`, scope);
        return { ...(await stop.status(scope)), action: 'engaged' };
      }
      if (isAutonomousSource(ctx.call.source)) {
        return err(`Releasing the emergency stop is MANUAL_ONLY and cannot run from a ${ctx.call.source} source.`, { code: 'MANUAL_ONLY_AUTONOMOUS' });
      }
      if (ctx.approvalId === undefined) {
        return err('Releasing the emergency stop needs an explicit approval.', { code: 'APPROVAL_REQUIRED' });
      }
      try {
        await stop.release(scope);
      } catch (error) {
        if (MinaraError.isInstance(error) && error.code === 'STOP_RELEASE_FORBIDDEN') return err(error.message, { code: 'STOP_RELEASE_FORBIDDEN', retryable: false });
        throw error;
      }
      const after = await stop.status(scope);
      if (after.engaged && after.scope === 'global') {
        return err('Your stop is released, but the operator\'s global stop is still engaged; only the operator releases it (minara stop --global --release).', { code: 'EMERGENCY_STOP', retryable: false });
      }
      return { ...after, action: 'released', approvalId: ctx.approvalId };
    },
  });
}
