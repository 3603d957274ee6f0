/**
 * The operator's controls on the command line: `minara grants`, `minara stop`, `minara tools` (capability
 * switches) and `minara usage` (where each user stands against quotas). They act on the data directory's storage
 * directly, as the operator (the person at this machine), so another process on the same database (a running
 * `minara serve`, a REPL) sees each change at its next call. Flags are parsed here, so `cli/index.ts` only routes.
 */
import type { GrantRecord, MinaraApp } from '@minara/agent';
import type { CliOptions } from './app';

/** Where output goes (tests capture it). */
export interface ControlsIo {
  readonly write: (s: string) => void;
  readonly writeErr: (s: string) => void;
}

const USAGE = `usage:
  minara grants list [--user u | --all] [--json]
  minara grants create --tools a,b | --tool-sets trade [--user u] [--sources cron,webhook]
                       --cap-per-call USD --cap-per-day USD --expires 7d|ISO [--note text]
  minara grants revoke <id>
  minara stop [--global] [--release] [--user u] [--reason text]
  minara stop status [--user u]
  minara tools list [--user u]
  minara tools disable|enable <tool-set> [--user u] [--reason text]
  minara usage [--user u | --all] [--json]
  minara usage set <user> [--rpm N|none] [--usd-per-day USD|none]`;

class UsageError extends Error {}

const VALUE_FLAGS = new Set(['--data-dir', '--workspace', '--user', '--tools', '--tool-sets', '--sources', '--cap-per-call', '--cap-per-day', '--expires', '--note', '--reason', '--rpm', '--usd-per-day', '--day']);
const BOOL_FLAGS = new Set(['--global', '--release', '--all', '--json']);

function parse(argv: readonly string[]): { positionals: string[]; values: Map<string, string>; flags: Set<string> } {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      if (VALUE_FLAGS.has(name)) {
        const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
        if (value === undefined || value === '') throw new UsageError(`option ${name} needs a value`);
        values.set(name, value);
      } else if (BOOL_FLAGS.has(name) && eq < 0) flags.add(name);
      else throw new UsageError(`unknown option ${name}`);
    } else positionals.push(arg);
  }
  return { positionals, values, flags };
}

const list = (raw: string | undefined) => raw?.split(',').map((s) => s.trim()).filter((s) => s !== '');
function usd(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw.replace(/^\$/, ''));
  if (!Number.isFinite(n)) throw new UsageError(`${flag} expects a number of USD, got "${raw}"`);
  return n; // a negative amount reaches grants.create, which names the field
}
/** `7d`, `12h`, `30m` or an ISO time → what `grants.create` takes. */
function expiry(raw: string | undefined): string | number | undefined {
  if (raw === undefined) return undefined;
  const m = /^(\d+)\s*([dhm])$/.exec(raw.trim());
  if (m) return Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[m[2] as 'd' | 'h' | 'm'];
  return raw;
}
const money = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `$${n.toFixed(2)}`);

function describeGrant(g: GrantRecord, spent: number, left: number | undefined): string {
  const tools = [...(g.toolName !== '*' ? [g.toolName] : []), ...(g.tools ?? [])];
  const what = [tools.length ? `tools ${tools.join(',')}` : '', g.toolSets?.length ? `sets ${g.toolSets.join(',')}` : ''].filter(Boolean).join(' + ');
  const status = g.revokedAt ? 'revoked' : g.expiresAt && Date.parse(g.expiresAt) <= Date.now() ? 'expired' : 'active';
  return `${g.id}  ${status}  for ${g.userId ?? '(every user)'}  ${what}  from ${g.sources?.length ? g.sources.join(',') : 'any autonomous source'}\n` +
    `    cap ${money(g.capPerCallUsd)}/call, ${money(g.capPerDayUsd)}/day; today spent ${money(spent)}, left ${money(left)}; expires ${g.expiresAt ?? 'never'}${g.note ? `; ${g.note}` : ''}\n`;
}

async function grants(app: MinaraApp, verb: string, rest: string[], values: Map<string, string>, flags: Set<string>, me: string, io: ControlsIo): Promise<number> {
  const registry = app.tools.grants;
  if (verb === 'list') {
    const userId = flags.has('--all') ? undefined : (values.get('--user') ?? me);
    const rows = await registry.list({ kind: 'stored', ...(userId ? { userId } : {}) });
    const withSpend = await Promise.all(rows.map(async (g) => ({ grant: g, spentTodayUsd: await registry.spentToday(g.id), leftTodayUsd: await registry.leftToday(g.id) })));
    if (flags.has('--json')) io.write(`${JSON.stringify(withSpend, null, 2)}\n`);
    else if (rows.length === 0) io.write(`No live grants${userId ? ` for ${userId}` : ''}. Create one with: minara grants create --tool-sets trade --cap-per-call 50 --cap-per-day 200 --expires 7d\n`);
    else for (const r of withSpend) io.write(describeGrant(r.grant, r.spentTodayUsd, r.leftTodayUsd));
    return 0;
  }
  if (verb === 'create') {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
    for (const required of ['--cap-per-call', '--cap-per-day', '--expires']) if (!values.has(required)) throw new UsageError(`grants create needs ${required}`);
    const tools = list(values.get('--tools'));
    const toolSets = list(values.get('--tool-sets'));
    const sources = list(values.get('--sources'));
    const note = values.get('--note');
    const grant = await registry.create(
      {
        userId: values.get('--user') ?? me,
        ...(tools ? { tools } : {}),
        ...(toolSets ? { toolSets } : {}),
        ...(sources ? { sources: sources as never } : {}),
        capPerCallUsd: usd(values.get('--cap-per-call'), '--cap-per-call'),
        capPerDayUsd: usd(values.get('--cap-per-day'), '--cap-per-day'),
        expiresAt: expiry(values.get('--expires')),
        ...(note ? { note } : {}),
      },
      { by: 'cli' },
    );
    io.write(`Created ${grant.id}.\n${describeGrant(grant, 0, grant.capPerDayUsd)}`);
    return 0;
  }
  if (verb === 'revoke') {
    const [id, ...more] = rest;
    if (id === undefined || more.length > 0) throw new UsageError('grants revoke takes one grant id');
    if (!(await registry.get(id))) {
      io.writeErr(`minara: no grant "${id}"\n`);
      return 1;
    }
    const revoked = await registry.revoke(id, { by: 'cli' });
    io.write(revoked ? `Revoked ${id}.\n` : `${id} was already revoked.\n`);
    return 0;
  }
  throw new UsageError(`unknown grants command "${verb}"`);
}

async function stop(app: MinaraApp, rest: string[], values: Map<string, string>, flags: Set<string>, me: string, io: ControlsIo): Promise<number> {
  const stopApi = app.tools.emergencyStop;
  const global = flags.has('--global');
  if (global && values.has('--user')) throw new UsageError('--global and --user cannot be combined');
  const userId = values.get('--user') ?? me;
  const show = async () => {
    const [g, u] = await Promise.all([stopApi.status(), stopApi.userStatus(userId)]);
    io.write(`global stop: ${g.engaged ? `ENGAGED since ${g.since ?? '?'}${g.reason ? ` (${g.reason})` : ''}` : 'off'}\n`);
    io.write(`${userId}'s stop: ${u.engaged ? `ENGAGED since ${u.since ?? '?'}${u.reason ? ` (${u.reason})` : ''}` : 'off'}\n`);
  };
  if (rest[0] === 'status') {
    if (rest.length > 1 || flags.has('--release') || global) throw new UsageError('stop status takes only --user');
    await show();
    return 0;
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const reason = values.get('--reason') ?? 'stopped from the command line';
  if (flags.has('--release')) {
    if (global) await stopApi.release({ by: 'cli' });
    else await stopApi.release({ userId, by: 'cli' });
    io.write(`Released the ${global ? 'global stop' : `stop of ${userId}`}.\n`);
  } else {
    if (global) await stopApi.engage(reason, { by: 'cli' });
    else await stopApi.engage(reason, { userId, by: 'cli' });
    io.write(`Engaged the ${global ? 'global stop: nothing above READ_ONLY runs for anyone' : `stop of ${userId}: nothing above READ_ONLY runs for ${userId}`}, and autonomous runs are skipped, in every process on this database. Release it with: minara stop${global ? ' --global' : values.has('--user') ? ` --user ${userId}` : ''} --release\n`);
  }
  await show();
  return 0;
}

async function toolsCommand(app: MinaraApp, verb: string, rest: string[], values: Map<string, string>, me: string, io: ControlsIo): Promise<number> {
  const userId = values.get('--user') ?? me;
  if (verb === 'list') {
    const off = new Map((await app.tools.capabilities.list({ userId })).map((s) => [s.toolSet, s] as const));
    const used = new Set(app.tools.list().map((t) => t.toolSet));
    for (const s of app.tools.toolSets().filter((x) => used.has(x.name) || off.has(x.name))) {
      const sw = off.get(s.name);
      io.write(`${sw ? 'off' : 'on '}  ${s.name.padEnd(10)} ${s.description}${sw ? `  (off since ${sw.disabledAt}${sw.reason ? `: ${sw.reason}` : ''}${sw.by ? `, by ${sw.by}` : ''})` : ''}\n`);
    }
    return 0;
  }
  if (verb !== 'disable' && verb !== 'enable') throw new UsageError(`unknown tools command "${verb}"`);
  const [toolSet, ...more] = rest;
  if (toolSet === undefined || more.length > 0) throw new UsageError(`tools ${verb} takes one tool-set name`);
  const reason = values.get('--reason');
  const changed = verb === 'disable'
    ? await app.tools.capabilities.disable(toolSet, { userId, by: 'cli', ...(reason ? { reason } : {}) })
    : await app.tools.capabilities.enable(toolSet, { userId, by: 'cli' });
  io.write(changed ? `Turned "${toolSet}" ${verb === 'disable' ? 'off' : 'on'} for ${userId}.\n` : `"${toolSet}" was already ${verb === 'disable' ? 'off' : 'on'} for ${userId}.\n`);
  return 0;
}

async function usage(app: MinaraApp, rest: string[], values: Map<string, string>, flags: Set<string>, me: string, io: ControlsIo): Promise<number> {
  const storage = app.storage;
  const day = values.get('--day') ?? new Date().toISOString().slice(0, 10);
  if (rest[0] === 'set') {
    const [, userId, ...more] = rest;
    if (userId === undefined || more.length > 0) throw new UsageError('usage set takes one user id');
    const limit = (raw: string | undefined, flag: string, integer: boolean): number | null | undefined => {
      if (raw === undefined) return undefined;
      if (raw === 'none') return null;
      const n = Number(raw);
      if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) throw new UsageError(`${flag} expects ${integer ? 'an integer' : 'a number of USD'} ≥ 0, or none`);
      return n;
    };
    const rpm = limit(values.get('--rpm'), '--rpm', true);
    const usdPerDay = limit(values.get('--usd-per-day'), '--usd-per-day', false);
    if (rpm === undefined && usdPerDay === undefined) throw new UsageError('usage set needs --rpm and/or --usd-per-day');
    const prior = await storage.controls.getQuota(userId);
    const settings = {
      userId, updatedAt: new Date().toISOString(),
      ...(rpm !== undefined ? { requestsPerMinute: rpm } : prior?.requestsPerMinute !== undefined ? { requestsPerMinute: prior.requestsPerMinute } : {}),
      ...(usdPerDay !== undefined ? { usdPerDay } : prior?.usdPerDay !== undefined ? { usdPerDay: prior.usdPerDay } : {}),
    };
    await storage.controls.setQuota(settings);
    await storage.audit.append({ at: settings.updatedAt, toolName: 'quota.set', tier: 0, source: 'operator', decision: 'allowed', durationMs: 0, argsJson: JSON.stringify({ ...settings, by: 'cli' }) });
    io.write(`Quota of ${userId}: ${settings.requestsPerMinute === undefined ? 'default' : settings.requestsPerMinute === null ? 'no limit' : settings.requestsPerMinute} turns/minute, ${settings.usdPerDay === undefined ? 'default' : settings.usdPerDay === null ? 'no limit' : `$${settings.usdPerDay.toFixed(2)}`}/day.\n`);
    return 0;
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const userTurns = ['user', 'subagent', 'mcp'];
  const ids = flags.has('--all')
    ? [...new Set([...(await storage.usage.byUser({ day })).map((u) => u.userId), ...(await storage.controls.listQuotas()).map((q) => q.userId)])].sort()
    : [values.get('--user') ?? me];
  const rows = await Promise.all(ids.map(async (userId) => {
    const [all, chat, autonomous, quota] = await Promise.all([
      storage.usage.totals({ day, userId }),
      storage.usage.totals({ day, userId, sources: userTurns }),
      storage.usage.totals({ day, userId, sources: ['heartbeat', 'cron', 'webhook', 'workflow'] }),
      storage.controls.getQuota(userId),
    ]);
    return { userId, day, turns: all.turns, costUsd: all.costUsd, userTurnsCostUsd: chat.costUsd, autonomousCostUsd: autonomous.costUsd, quota: quota ?? null };
  }));
  if (flags.has('--json')) {
    io.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  io.write(`Usage on ${day} (UTC). Limits not set here fall back to the gateway defaults (GATEWAY_QUOTA_RPM, GATEWAY_QUOTA_USD_PER_DAY) or the token's minara_quota claim.\n`);
  if (rows.length === 0) io.write('No usage recorded that day.\n');
  for (const r of rows) {
    const rpm = r.quota?.requestsPerMinute === undefined ? 'default' : r.quota.requestsPerMinute === null ? 'no limit' : String(r.quota.requestsPerMinute);
    const perDay = r.quota?.usdPerDay === undefined ? 'default' : r.quota.usdPerDay === null ? 'no limit' : money(r.quota.usdPerDay);
    const left = typeof r.quota?.usdPerDay === 'number' ? `, ${money(Math.max(0, r.quota.usdPerDay - r.userTurnsCostUsd))} left` : '';
    io.write(`${r.userId.padEnd(16)} ${String(r.turns).padStart(4)} turns  chat ${money(r.userTurnsCostUsd)} of ${perDay}/day${left}  autonomous ${money(r.autonomousCostUsd)}  rpm limit ${rpm}\n`);
  }
  return 0;
}

/** Run `minara grants|stop|tools|usage …` (argv without the leading `minara`). */
export async function runControlsCli(argv: readonly string[], io: ControlsIo = { write: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) }, options: { readonly app?: MinaraApp | undefined } = {}): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.writeErr(`minara: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { positionals, values, flags } = parsed;
  const [command, ...rest] = positionals;
  const cli: CliOptions = {
    ...(values.has('--data-dir') ? { dataDir: values.get('--data-dir') } : {}),
    ...(values.has('--workspace') ? { workspace: values.get('--workspace') } : {}),
  };
  const app = options.app ?? (await (await import('./app')).buildApp(cli, { surface: 'cli', mcp: false }));
  try {
    const me = app.memory.scope.userId;
    switch (command) {
      case 'grants':
        return await grants(app, rest[0] ?? 'list', rest.slice(1), values, flags, me, io);
      case 'stop':
        return await stop(app, rest, values, flags, me, io);
      case 'tools':
        return await toolsCommand(app, rest[0] ?? 'list', rest.slice(1), values, me, io);
      case 'usage':
        return await usage(app, rest, values, flags, me, io);
      default:
        throw new UsageError(`unknown command "${String(command)}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.writeErr(`minara: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    const e = error as { code?: unknown; message?: unknown };
    if (e?.code === 'INVALID_ARGUMENT') {
      io.writeErr(`minara: ${String(e.message)}\n`);
      return 1;
    }
    throw error;
  } finally {
    if (!options.app) await app.close();
  }
}

/** The commands this file serves. */
export const CONTROL_COMMANDS: ReadonlySet<string> = new Set(['grants', 'stop', 'tools', 'usage']);
