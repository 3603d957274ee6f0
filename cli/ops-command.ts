/**
 * `minara doctor [--anonymous] [--json] [--fix [--apply] [--only a,b]]` and
 * `minara memory export [--out dir] [--sign] [--include-constraints]` /
 * `minara memory import <dir> [--apply] [--approve-hard-constraints]`.
 */
import path from 'node:path';
import { DOCTOR_FIXES, type DoctorFixName } from '@minara/agent';
import type { CliOptions } from './app';

export interface OpsFlags {
  readonly anonymous?: boolean | undefined;
  readonly json?: boolean | undefined;
  readonly fix?: boolean | undefined;
  readonly apply?: boolean | undefined;
  readonly only?: readonly string[] | undefined;
  readonly out?: string | undefined;
  readonly sign?: boolean | undefined;
  readonly includeConstraints?: boolean | undefined;
  readonly approveHardConstraints?: boolean | undefined;
  /** `memory list`: only rows of this source (`chat_extracted`), category, and at most this many. */
  readonly source?: string | undefined;
  readonly category?: string | undefined;
  readonly limit?: number | undefined;
  /** Whether stdin and stdout are a terminal a person sits at (hard constraints need one). */
  readonly interactive?: boolean | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
  readonly now?: (() => Date) | undefined;
}

const out = (flags: OpsFlags) => flags.write ?? ((s: string) => process.stdout.write(s));
const err = (flags: OpsFlags) => flags.writeErr ?? ((s: string) => process.stderr.write(s));

/** Open the operator's app, run `work`, close the app; a failure prints `minara: CODE: message` and exits 1. */
async function withApp(cli: CliOptions, flags: OpsFlags, work: (app: Awaited<ReturnType<typeof import('./app')['buildApp']>>) => Promise<number>): Promise<number> {
  const { buildApp } = await import('./app');
  const app = await buildApp(cli, { surface: 'cli', mcp: false });
  try {
    return await work(app);
  } catch (error) {
    const e = error as { code?: unknown };
    err(flags)(`minara: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await app.close();
  }
}

/** `minara doctor`. Exit 0; 2 for a usage error. */
export async function runDoctorCommand(cli: CliOptions, positionals: readonly string[], flags: OpsFlags): Promise<number> {
  if (positionals.length > 0) {
    err(flags)(`minara: unexpected argument "${positionals[0]}" (usage: minara doctor [--anonymous] [--json] [--fix [--apply] [--only ${DOCTOR_FIXES.join(',')}]])\n`);
    return 2;
  }
  if (!flags.fix && (flags.apply || flags.only)) {
    err(flags)('minara: --apply and --only only apply with --fix\n');
    return 2;
  }
  const unknown = (flags.only ?? []).filter((n) => !(DOCTOR_FIXES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    err(flags)(`minara: --only: unknown fix "${unknown[0]}"; expected ${DOCTOR_FIXES.join(', ')}\n`);
    return 2;
  }
  const [{ buildApp }, agent] = await Promise.all([import('./app'), import('@minara/agent')]);
  const app = await buildApp(cli, { surface: 'cli', mcp: false });
  // Everything under the data directory and the workspace is the owner's alone (0700 / 0600).
  const privatePaths = [app.config.dataDir, ...(app.workspace ? [app.workspace.dir] : [])];
  try {
    if (flags.fix) {
      const report = await agent.runDoctorFixes({
        storage: app.storage, memory: app.memory, privatePaths, ...(app.learning ? { learning: app.learning } : {}), apply: flags.apply === true,
        ...(flags.only ? { only: flags.only as DoctorFixName[] } : {}), ...(flags.now ? { now: flags.now } : {}),
      });
      out(flags)(`${flags.json ? JSON.stringify(report, null, 2) : agent.formatDoctorFixReport(report)}\n`);
      return 0;
    }
    const report = await agent.runDoctor({
      storage: app.storage, memory: app.memory, ...(app.workspace ? { workspace: app.workspace } : {}), modelStatus: app.modelStatus, embedder: app.embedderConfigured, privatePaths, disabledFeatures: app.disabledFeatures,
      ...(app.auditIntegrity ? { auditIntegrity: app.auditIntegrity } : {}), anonymous: flags.anonymous === true, ...(flags.now ? { now: flags.now } : {}),
    });
    out(flags)(`${flags.json ? JSON.stringify(report, null, 2) : agent.formatDoctorReport(report)}\n`);
    return 0;
  } finally {
    await app.close();
  }
}

/** `minara memory export|import`. Exit 0; 1 when the command failed; 2 for a usage error. */
export async function runMemoryCommand(cli: CliOptions, positionals: readonly string[], flags: OpsFlags): Promise<number> {
  const [verb, dir, ...rest] = positionals;
  if (verb === 'list' || verb === 'delete') return runMemoryRows(cli, verb, positionals.slice(1), flags);
  if (verb === 'profile') return runMemoryProfile(cli, positionals.slice(1), flags);
  if (verb === 'review' || verb === 'accept' || verb === 'reject') return runMemoryReview(cli, verb, positionals.slice(1), flags);
  if (flags.source !== undefined || flags.category !== undefined || flags.limit !== undefined) {
    err(flags)('minara: --source, --category and --limit apply to memory list\n');
    return 2;
  }
  const usage =
    'usage: minara memory export [--out dir] [--sign] [--include-constraints] | minara memory import <dir> [--apply] [--approve-hard-constraints] | minara memory list [--source s] [--category c] [--limit n] | minara memory delete <id> | minara memory profile [set <key> <value> | delete <key>] | minara memory review | minara memory accept|reject <id>';
  const exporting = verb === 'export';
  if ((verb !== 'export' && verb !== 'import') || rest.length > 0 || (exporting && dir !== undefined) || (!exporting && dir === undefined)) {
    err(flags)(`minara: ${usage}\n`);
    return 2;
  }
  if (exporting && (flags.apply || flags.approveHardConstraints)) {
    err(flags)('minara: --apply and --approve-hard-constraints apply to memory import\n');
    return 2;
  }
  if (!exporting && (flags.out !== undefined || flags.sign || flags.includeConstraints)) {
    err(flags)('minara: --out, --sign and --include-constraints apply to memory export\n');
    return 2;
  }
  const env = flags.env ?? process.env;
  // A hard constraint is imported only when a person at a terminal asked for it.
  const nonInteractive = env.MINARA_NON_INTERACTIVE === '1' || flags.interactive !== true;
  if (!exporting && flags.approveHardConstraints && nonInteractive) {
    err(flags)('minara: --approve-hard-constraints needs an interactive terminal (and MINARA_NON_INTERACTIVE unset); hard constraints will be rejected\n');
  }
  const [{ buildApp }, agent] = await Promise.all([import('./app'), import('@minara/agent')]);
  const app = await buildApp(cli, { surface: 'cli', mcp: false });
  try {
    const now = (flags.now ?? (() => new Date()))();
    // Exports are signed with a key derived from the approval key, which lives outside the database (the same
    // resolution createApp used: MINARA_APPROVAL_KEY, MINARA_APPROVAL_KEY_FILE, or <dataDir>.approval-key).
    const approvalKey = agent.resolveApprovalKey({ dataDir: app.config.dataDir }).key;
    if (exporting) {
      const target = flags.out ?? path.join(app.config.dataDir, 'exports', now.toISOString().replace(/[:.]/g, '-'));
      const r = await agent.exportMemory({
        storage: app.storage, out: target, sign: flags.sign === true, approvalKey, includeConstraints: flags.includeConstraints === true,
        forbiddenRoots: [path.join(app.config.dataDir, 'sandbox'), ...(app.workspace ? [app.workspace.dir] : [])],
      });
      const c = r.counts;
      out(flags)(`Exported to ${r.dir}${r.signed ? ' (signed)' : ''}: ${c.methodologies} methodologies, ${c.preferences} preferences, ${c.tradeCases} trade cases, ${c.assets} asset pages, ${c.memories} memories, ${c.profileKeys} profile entries.\n`);
      return 0;
    }
    const r = await agent.importMemory({
      storage: app.storage, memory: app.memory, from: dir!, apply: flags.apply === true, approvalKey, approveHardConstraints: flags.approveHardConstraints === true && !nonInteractive,
    });
    out(flags)(`${agent.formatImportReport(r)}\n`);
    return 0;
  } catch (error) {
    const e = error as { code?: unknown };
    err(flags)(`minara: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await app.close();
  }
}

/**
 * `minara memory list [--source s] [--category c] [--limit n]`: the operator's memories, newest first, each with
 * its source (`chat_extracted` for what the extraction pass learned from conversations), and `minara memory delete
 * <id>`: a soft delete (restorable for the retention period, then purged).
 */
async function runMemoryRows(cli: CliOptions, verb: 'list' | 'delete', args: readonly string[], flags: OpsFlags): Promise<number> {
  if (verb === 'delete' && (args.length !== 1 || !/^[1-9]\d{0,15}$/.test(args[0]!) || flags.source !== undefined || flags.category !== undefined || flags.limit !== undefined)) {
    err(flags)('minara: usage: minara memory delete <id> (a memory id from "minara memory list")\n');
    return 2;
  }
  if (verb === 'list' && args.length > 0) {
    err(flags)(`minara: unexpected argument "${args[0]}"; usage: minara memory list [--source s] [--category c] [--limit n]\n`);
    return 2;
  }
  return withApp(cli, flags, async (app) => {
    if (verb === 'delete') {
      const id = Number(args[0]);
      const row = await app.memory.get(id);
      if (!row || !(await app.memory.softDelete(id))) {
        err(flags)(`minara: no memory #${id} for this user\n`);
        return 1;
      }
      out(flags)(`Deleted memory #${id} (${row.source ?? row.category}); it is purged after the retention period.\n`);
      return 0;
    }
    const rows = await app.memory.read({ limit: flags.limit ?? 50, ...(flags.source ? { source: flags.source } : {}), ...(flags.category ? { category: flags.category } : {}) });
    if (rows.length === 0) {
      out(flags)(`No memories${flags.source ? ` from ${flags.source}` : ''}${flags.category ? ` in ${flags.category}` : ''}.\n`);
      return 0;
    }
    for (const m of rows) {
      const turn = typeof m.metadata?.['turnId'] === 'string' ? `  turn ${m.metadata['turnId']}` : '';
      out(flags)(`#${m.id} [${m.category}] ${m.content.replace(/\s+/gu, ' ').slice(0, 200)}  (${m.source ?? 'unknown'}, ${m.updatedAt.slice(0, 10)}${turn})\n`);
    }
    return 0;
  });
}

/**
 * `minara memory profile`: the operator's profile keys (who set each), `minara memory profile set <key> <value>`
 * (the person's value: the agent never replaces it) and `minara memory profile delete <key>`.
 */
async function runMemoryProfile(cli: CliOptions, args: readonly string[], flags: OpsFlags): Promise<number> {
  const [verb, key, ...valueWords] = args;
  const usage = 'usage: minara memory profile [set <key> <value> | delete <key>]';
  const valid = (verb === undefined && args.length === 0) || (verb === 'set' && key !== undefined && valueWords.length > 0) || (verb === 'delete' && key !== undefined && valueWords.length === 0);
  if (!valid || flags.source !== undefined || flags.category !== undefined || flags.limit !== undefined) {
    err(flags)(`minara: ${usage}\n`);
    return 2;
  }
  return withApp(cli, flags, async (app) => {
    if (verb === 'set') {
      const entry = await app.memory.profile.set(key!, valueWords.join(' '), { setBy: 'user' });
      out(flags)(`Profile ${entry.key} = ${entry.value} (set by you; the agent will not replace it).\n`);
      return 0;
    }
    if (verb === 'delete') {
      if (!(await app.memory.profile.delete(key!))) {
        err(flags)(`minara: no profile key "${key}"\n`);
        return 1;
      }
      out(flags)(`Deleted profile key ${key}.\n`);
      return 0;
    }
    const entries = await app.memory.profile.list();
    if (entries.length === 0) out(flags)('Profile: (empty)\n');
    for (const e of entries) out(flags)(`${e.key}: ${e.value}  (${e.setBy === 'agent' ? 'set by the agent' : 'set by you'}, ${e.updatedAt.slice(0, 10)})\n`);
    return 0;
  });
}

/**
 * `minara memory review`: memories the model wrote after reading untrusted content, held out of every prompt
 * (source `proposed`), with what it had read; `minara memory accept <id>` lets one reach prompts, `minara memory
 * reject <id>` soft-deletes it. The operator at the terminal decides (the CLI is the operator's).
 */
async function runMemoryReview(cli: CliOptions, verb: 'review' | 'accept' | 'reject', args: readonly string[], flags: OpsFlags): Promise<number> {
  const badId = verb !== 'review' && (args.length !== 1 || !/^[1-9]\d{0,15}$/.test(args[0]!));
  if ((verb === 'review' && args.length > 0) || badId || flags.source !== undefined || flags.category !== undefined) {
    err(flags)('minara: usage: minara memory review | minara memory accept <id> | minara memory reject <id>\n');
    return 2;
  }
  const agent = await import('@minara/agent');
  return withApp(cli, flags, async (app) => {
    if (verb === 'review') {
      const rows = await agent.listHeldMemories(app.memory, { limit: flags.limit ?? 100 });
      if (rows.length === 0) {
        out(flags)('No memories held for review.\n');
        return 0;
      }
      for (const m of rows) {
        const sources = Array.isArray(m.metadata?.['untrustedSources']) ? (m.metadata['untrustedSources'] as unknown[]).map(String).join(', ') : 'untrusted content';
        const category = typeof m.metadata?.['proposedCategory'] === 'string' ? m.metadata['proposedCategory'] : m.category;
        out(flags)(`#${m.id} [${category}] ${m.content.replace(/\s+/gu, ' ').slice(0, 200)}\n    written after reading: ${sources}\n`);
      }
      out(flags)('Accept with "minara memory accept <id>" (it then reaches prompts) or reject with "minara memory reject <id>".\n');
      return 0;
    }
    const id = Number(args[0]);
    const r = verb === 'accept' ? await agent.acceptHeldMemory(app.memory, id) : await agent.rejectHeldMemory(app.memory, id);
    out(flags)(r.decision === 'accepted' ? `Accepted memory #${id}; it reaches prompts from the next session${r.memoryId !== id ? ` (recorded as fact #${r.memoryId})` : ''}.\n` : `Rejected memory #${id}; it never reaches a prompt.\n`);
    return 0;
  });
}
