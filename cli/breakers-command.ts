/**
 * `minara breakers`: the circuit breakers. `list` (every user with a breaker; tripped first), `status [--user]`
 * (one user's, measured now), `reset <user> [--reason]` (a person's decision, written to the audit trail) and
 * `set <user> key=value…` (per-user limits; `set <user> clear` removes them). The CLI runs as the machine's
 * operator (whoever can read the database and the approval key), like `minara approvals approve`.
 */
import os from 'node:os';
import type { BreakerLimits, BreakerStatus, MinaraApp } from '@minara/agent';
import type { CliOptions } from './app';

/** Flags of `minara breakers`. */
export interface BreakersCommandOptions {
  readonly user?: string | undefined;
  readonly reason?: string | undefined;
  readonly json?: boolean | undefined;
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
  /** Use this app instead of building one (tests). */
  readonly app?: MinaraApp | undefined;
}

const USAGE = `usage: minara breakers [list] [--json]
       minara breakers status [--user id] [--json]
       minara breakers reset <user> [--reason text]
       minara breakers set <user> maxConsecutiveLosses=5 maxDailyLossUsd=250 … | minara breakers set <user> clear`;

/** One breaker in one line (or two when tripped). */
export function formatBreaker(b: BreakerStatus): string {
  const l = b.limits;
  const head = b.tripped ? `TRIPPED ${b.userId}: ${b.reason ?? b.rule ?? ''} (since ${b.since ?? '?'})` : `ok      ${b.userId}${b.resetAt ? ` (reset ${b.resetAt} by ${b.resetBy ?? '?'})` : ''}`;
  const limits = l.enabled
    ? `limits: ${l.maxConsecutiveLosses} losses in a row, $${l.maxDailyLossUsd} a day, ${l.maxDrawdownPct}% drawdown, ${Math.round(l.maxErrorRate * 100)}% errors of ≥${l.minCallsForErrorRate} in ${l.errorWindowMinutes} min`
    : 'limits: off for this user';
  const m = b.metrics;
  const now = m ? `now: ${m.consecutiveLosses} loss(es) in a row, realised today $${m.realizedTodayUsd.toFixed(2)}${m.drawdownPct !== undefined ? `, drawdown ${m.drawdownPct.toFixed(1)}%` : ''}, ${m.errors}/${m.executions} failed` : undefined;
  return `${head}\n    ${limits}${now ? `\n    ${now}` : ''}\n`;
}

/** The REPL's line for a tripped breaker (undefined when it is not tripped). */
export async function breakerNotice(app: MinaraApp): Promise<string | undefined> {
  const b = await app.tools.breakers?.status(app.memory.scope.userId);
  return b?.tripped ? `circuit breaker tripped: ${b.reason ?? b.rule}. Autonomous trades are halted; \`minara breakers reset ${b.userId}\` resets it.` : undefined;
}

function parseLimits(pairs: readonly string[]): Partial<BreakerLimits> {
  const out: Record<string, number | boolean> = {};
  for (const p of pairs) {
    const m = /^([A-Za-z]+)=(.+)$/u.exec(p);
    if (!m) throw new Error(`expected key=value, got ${JSON.stringify(p)}`);
    out[m[1]!] = m[1] === 'enabled' ? m[2] === 'true' : Number(m[2]);
    if (m[1] === 'enabled' && m[2] !== 'true' && m[2] !== 'false') throw new Error(`enabled: expected true or false, got ${JSON.stringify(m[2])}`);
  }
  return out as Partial<BreakerLimits>;
}

export async function runBreakersCommand(cli: CliOptions, positionals: readonly string[], options: BreakersCommandOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = options.writeErr ?? ((s: string) => process.stderr.write(s));
  const [verb = 'list', user, ...rest] = positionals;
  const ok =
    (verb === 'list' && user === undefined) || (verb === 'status' && user === undefined) || (verb === 'reset' && user !== undefined && rest.length === 0) || (verb === 'set' && user !== undefined && rest.length > 0);
  if (!ok) {
    writeErr(`minara: ${USAGE}\n`);
    return 2;
  }
  const { buildApp } = await import('./app');
  const app = options.app ?? (await buildApp(cli, { surface: 'cli', mcp: false }));
  try {
    const breakers = app.tools.breakers;
    if (!breakers) {
      writeErr('minara: circuit breakers are off (MINARA_BREAKERS=off or createApp({ breakers: false })).\n');
      return 1;
    }
    if (verb === 'list') {
      const all = await breakers.list();
      if (options.json) write(`${JSON.stringify(all, null, 2)}\n`);
      else if (all.length === 0) write('No breaker has tripped or been configured yet. Defaults apply to every user:\n' + formatBreaker(await breakers.status(app.memory.scope.userId)));
      else for (const b of all) write(formatBreaker(b));
      return 0;
    }
    if (verb === 'status') {
      const b = await breakers.status(options.user ?? app.memory.scope.userId, { measure: true });
      write(options.json ? `${JSON.stringify(b, null, 2)}\n` : formatBreaker(b));
      return 0;
    }
    if (verb === 'reset') {
      const before = await breakers.status(user!);
      const b = await breakers.reset(user!, { by: `${os.userInfo().username} (cli)`, ...(options.reason !== undefined ? { reason: options.reason } : {}) });
      write(before.tripped ? `Reset the breaker of ${b.userId} (it was tripped: ${before.reason ?? before.rule}). Autonomous trades run again.\n` : `The breaker of ${b.userId} was not tripped; its measurements now start from ${b.resetAt}.\n`);
      return 0;
    }
    let limits: Partial<BreakerLimits>;
    try {
      limits = rest.length === 1 && rest[0] === 'clear' ? {} : parseLimits(rest);
    } catch (error) {
      writeErr(`minara: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
    const set = await breakers.configure(user!, limits, `${os.userInfo().username} (cli)`);
    write(formatBreaker({ ...(await breakers.status(user!)), limits: set }));
    return 0;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    if (e?.code === 'INVALID_ARGUMENT') {
      writeErr(`minara: ${String(e.message)}\n`);
      return 2;
    }
    throw error;
  } finally {
    if (!options.app) await app.close();
  }
}
