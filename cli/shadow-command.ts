/**
 * `minara shadow report [--since 7d|ISO] [--json]`: in shadow mode (`MINARA_TRADING_MODE=shadow`), what the agent
 * would have done against what the market did: each shadow fill marked to the current price, and the shadow book
 * against holding its opening balances.
 */
import type { MinaraApp } from '@minara/agent';
import type { ShadowReport } from '@minara/agent/finance';
import type { CliOptions } from './app';
import { parseSince } from './audit-command';

/** Flags of `minara shadow`. */
export interface ShadowCommandOptions {
  readonly since?: string | undefined;
  readonly json?: boolean | undefined;
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
  /** Use this app instead of building one (tests). */
  readonly app?: MinaraApp | undefined;
  readonly now?: (() => Date) | undefined;
}

const usd = (n: number, signed = false) => `${n < 0 ? '-' : signed ? '+' : ''}$${Math.abs(n).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const units = (n: number) => n.toLocaleString('en-US', { maximumSignificantDigits: 6 });

/** The report as text. */
export function formatShadowReport(r: ShadowReport): string {
  const lines = [`Shadow book "${r.accountId}" at ${r.at}${r.since ? `, fills since ${r.since}` : ''}`];
  if (r.market === 'simulated') lines.push('  SIMULATED MARKET: offline, generated prices (no MINARA_API_KEY). A try-out of shadow mode, not a comparison with the real market.');
  if (r.fills.length === 0) lines.push('  No shadow fills yet: the agent has not placed an order in shadow mode.');
  for (const f of r.fills) {
    lines.push(
      `  ${f.at.slice(0, 16).replace('T', ' ')}  ${f.side.padEnd(5)} ${units(f.quantity)} ${f.symbol} @ ${usd(f.priceUsd)}  (${usd(f.notionalUsd)}, fee ${usd(f.feeUsd)})` +
        (f.currentPriceUsd !== undefined ? `  now ${usd(f.currentPriceUsd)}` : '') + (f.markedPnlUsd !== undefined ? `  marked ${usd(f.markedPnlUsd, true)}` : ''),
    );
  }
  const t = r.totals;
  lines.push(`Totals: ${t.fills} fill(s), ${usd(t.notionalUsd)} traded, fees ${usd(t.feesUsd)}; marked P&L ${usd(t.markedPnlUsd, true)}`);
  lines.push(`The agent's book is worth ${usd(t.agentValueUsd)} now; holding its opening balances would be ${usd(t.holdValueUsd)}: ${t.edgeUsd >= 0 ? 'ahead' : 'behind'} by ${usd(Math.abs(t.edgeUsd))}.`);
  for (const a of r.byAsset) {
    lines.push(`  ${a.symbol}: ${a.fills} fill(s), first at ${usd(a.firstPriceUsd)}${a.currentPriceUsd !== undefined ? ` → now ${usd(a.currentPriceUsd)}` : ''}${a.movePct !== undefined ? ` (${a.movePct >= 0 ? '+' : ''}${a.movePct.toFixed(1)}%)` : ''}, marked ${usd(a.markedPnlUsd, true)}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function runShadowCommand(cli: CliOptions, positionals: readonly string[], options: ShadowCommandOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = options.writeErr ?? ((s: string) => process.stderr.write(s));
  const [verb = 'report', ...rest] = positionals;
  if (verb !== 'report' || rest.length > 0) {
    writeErr('minara: usage: minara shadow report [--since 7d|ISO] [--json]\n');
    return 2;
  }
  let since: string | undefined;
  try {
    since = parseSince(options.since, (options.now ?? (() => new Date()))());
  } catch (error) {
    writeErr(`minara: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const { buildApp } = await import('./app');
  const app = options.app ?? (await buildApp(cli, { surface: 'cli', mcp: false }));
  try {
    const report = app.finance?.shadowReport;
    if (!report) {
      writeErr(`minara: the agent is not in shadow mode (it trades ${app.finance?.tradingMode ?? 'nothing: the finance pack is off'}); set MINARA_TRADING_MODE=shadow (with MINARA_API_KEY for the live market; without it, shadow mode runs against the simulated market, offline).\n`);
      return 1;
    }
    const r = await report(since ? { since } : {});
    write(options.json ? `${JSON.stringify(r, null, 2)}\n` : formatShadowReport(r));
    return 0;
  } finally {
    if (!options.app) await app.close();
  }
}
