import type { ToolEntry, ToolHook } from '../../tools/types';
import type { FinanceDeps } from '../context';
import { defineStage } from './stage';

/**
 * Stage 2 — token safety: every token the call touches must not be on the deny list (symbol or
 * address); a token the call acquires must be known and verified (unless `allowUnverified`); an address
 * given with a symbol must belong to that symbol; a perp market must exist; a transfer destination must
 * not be on the deny list. A market without `lookupToken` cannot verify, so acquisitions fail closed.
 */
export function createTokenSafetyHook(deps: FinanceDeps, isPackTool: (t: ToolEntry) => boolean): ToolHook {
  return defineStage('token_safety', deps, isPackTool, async ({ facts, limits }) => {
    const deny = new Set(limits.denyList.map((d) => d.trim().toLowerCase()));
    if (facts.destination && deny.has(facts.destination.toLowerCase())) return { block: `destination ${facts.destination} is on the deny list` };
    for (const t of facts.tokens) {
      if (deny.has(t.symbol.toLowerCase()) || (t.address && deny.has(t.address.toLowerCase()))) return { block: `${t.symbol}${t.address ? ` (${t.address})` : ''} is on the deny list` };
      if (deps.isStable(t.symbol) && !t.address) continue;
      const lookup = deps.market.lookupToken?.bind(deps.market);
      if (!lookup) {
        if (t.acquired && !limits.allowUnverified) return { block: `cannot verify ${t.symbol}: the market data provider has no token lookup` };
        continue;
      }
      const bySymbol = await lookup({ symbol: t.symbol, ...(t.chain ? { chain: t.chain } : {}) });
      if (t.address) {
        const byAddress = await lookup({ address: t.address, ...(t.chain ? { chain: t.chain } : {}) });
        if (!byAddress) return { block: `unknown contract ${t.address} for ${t.symbol}` };
        if (deny.has(byAddress.symbol.toLowerCase())) return { block: `${byAddress.symbol} (${t.address}) is on the deny list` };
        if (byAddress.symbol.toUpperCase() !== t.symbol.toUpperCase()) {
          return { block: `symbol/address mismatch: ${t.address} is ${byAddress.symbol} (${byAddress.name}), not ${t.symbol}` };
        }
        if (bySymbol && bySymbol.verified && bySymbol.address.toLowerCase() !== t.address.toLowerCase()) {
          return { block: `symbol/address mismatch: the verified ${t.symbol} is ${bySymbol.address} on ${bySymbol.chain}, not ${t.address} (possible look-alike)` };
        }
        if (!byAddress.verified && t.acquired && !limits.allowUnverified) return { block: `${t.symbol} at ${t.address} is not a verified contract` };
        continue;
      }
      if (!bySymbol) {
        if (t.acquired || facts.kind === 'spot') return { block: `unknown token ${t.symbol}` };
        continue;
      }
      if (!bySymbol.verified && t.acquired && !limits.allowUnverified) return { block: `${t.symbol} is not a verified token` };
      if (facts.kind === 'perp_open' && bySymbol.perps === false) return { block: `no perpetual market for ${t.symbol}` };
    }
    return undefined;
  });
}
