import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import { packOrderFacts } from './order-facts';
import { clientOrderId, type FinanceDeps } from './context';
import { buildPreview } from './preview';
import { perpCloseInput, perpOpenInput } from './schemas';
import { executed } from './trade-tools';

/** Perp tools (tool set `perps`, fund-moving, ALWAYS_CONFIRM): open and close positions. */
export function createPerpsTools(deps: FinanceDeps): ToolEntry[] {
  return [
    defineTool({
      name: 'open_perps_position',
      toolSet: 'perps',
      description: 'Open or add to a perpetual long/short with leverage (preview first)',
      inputSchema: perpOpenInput,
      permissionTier: PermissionTier.ALWAYS_CONFIRM,
      isFundMoving: true,
      orderFacts: packOrderFacts(deps, 'open_perps_position'),
      timeoutMs: 30_000,
      preview: (i, ctx) => buildPreview(deps, 'open_perps_position', i, ctx),
      execute: async (i, ctx) =>
        executed(
          await deps.trading.openPerp(
            {
              symbol: i.symbol.toUpperCase(), side: i.side, sizeUsd: i.sizeUsd, leverage: i.leverage,
              ...(i.slippageBps != null ? { maxSlippageBps: i.slippageBps } : {}), clientOrderId: clientOrderId('open_perps_position', ctx, i),
            },
            { signal: ctx.signal },
          ),
        ),
    }),
    defineTool({
      name: 'close_perps_position',
      toolSet: 'perps',
      description: 'Close all or part of a perpetual position (preview first)',
      inputSchema: perpCloseInput,
      permissionTier: PermissionTier.ALWAYS_CONFIRM,
      isFundMoving: true,
      orderFacts: packOrderFacts(deps, 'close_perps_position'),
      timeoutMs: 30_000,
      preview: (i, ctx) => buildPreview(deps, 'close_perps_position', i, ctx),
      execute: async (i, ctx) =>
        executed(
          await deps.trading.closePerp(
            { symbol: i.symbol.toUpperCase(), ...(i.fraction != null ? { fraction: i.fraction } : {}), clientOrderId: clientOrderId('close_perps_position', ctx, i) },
            { signal: ctx.signal },
          ),
        ),
    }),
  ];
}
