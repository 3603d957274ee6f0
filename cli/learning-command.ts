/**
 * The learning loop's operator surface, shared by the REPL (`/learning`, `/preferences`) and the CLI
 * (`minara learning`, `minara preferences`): list methodologies with their confidence, uses and state, the
 * pending trade cases, graduate / quarantine / reinstate a methodology, seed methodologies from a file, run
 * the role reflector, print an asset's compiled page; list, approve and reject preferences.
 */
import { readFile } from 'node:fs/promises';
import type { LearningStore, MethodologyRecord, MethodologyState, MinaraApp, PreferenceRecord, PreferenceState } from '@minara/agent';
import type { CliOptions } from './app';
import { truncate } from './render';

/** Flags the learning verbs take. */
export interface LearningFlags {
  readonly reason?: string | undefined;
  readonly force?: boolean | undefined;
}

/** What a learning verb printed, and whether it was used correctly (false → exit code 2 in the CLI). */
export interface LearningOutput {
  readonly text: string;
  readonly ok: boolean;
}

export const LEARNING_USAGE =
  'learning [list [proposed|candidate|graduated|quarantined]] | cases [pending|reflected] | accept <id> [--reason text] | graduate <id> [--force] [--reason text] | quarantine <id> [--reason text] | ' +
  'reinstate <id> [--reason text] | seed <file> | reflect [limit] | synthesize | page <asset>';
export const PREFERENCES_USAGE = 'preferences [list [proposed|active|rejected]] | approve <id> | reject <id>';

const METHODOLOGY_STATES: readonly MethodologyState[] = ['proposed', 'candidate', 'graduated', 'quarantined'];
const PREFERENCE_STATES: readonly PreferenceState[] = ['proposed', 'active', 'rejected'];

function usage(text: string): LearningOutput {
  return { text: `usage: ${text}`, ok: false };
}

function id(raw: string | undefined): number | undefined {
  return raw !== undefined && /^[1-9]\d{0,14}$/.test(raw) ? Number(raw) : undefined;
}

/** One methodology as a line: id, state (a candidate proposed for graduation shows `to graduate`), Wilson bound, wins/uses, asset class, text. */
export function methodologyRow(m: MethodologyRecord): string {
  const state = m.state === 'candidate' && m.graduationProposedAt ? 'to graduate' : m.state;
  const row = `  #${String(m.id).padEnd(5)} ${state.padEnd(11)} ${m.confidence.toFixed(3)}  ${`${m.wins}/${m.uses}`.padStart(7)}  ${m.assetClass.padEnd(12)} ${truncate(m.text, 80)}`;
  // A proposal written after untrusted content says what the agent had read: the reviewer sees it beside the text.
  return m.state === 'proposed' && m.stateReason?.includes('proposed after reading') ? `${row}\n         ${truncate(m.stateReason, 160)}` : row;
}

/** One preference as a line. */
export function preferenceRow(p: PreferenceRecord): string {
  const kind = p.kind === 'hard_constraint' ? 'hard' : 'behaviour';
  return `  #${String(p.id).padEnd(5)} ${p.state.padEnd(9)} ${kind.padEnd(9)} ${p.dimension.padEnd(14)} ${`${p.evidence}+/${p.contradictions}-`.padStart(7)}  ${truncate(p.text, 80)}`;
}

async function overview(learning: LearningStore, state: MethodologyState | undefined): Promise<string> {
  const list = await learning.listMethodologies({ ...(state ? { states: [state] } : {}), limit: 200 });
  const pending = await learning.listCases({ status: 'pending', limit: 200 });
  const lines = [
    `Methodologies${state ? ` (${state})` : ''}: ${list.length}${list.length === 200 ? '+' : ''}   (Wilson lower bound at 95 %; graduation is proposed at ≥ ${learning.policy.graduationMinConfidence} with ≥ ${learning.policy.graduationMinUses} uses and applied by you)`,
  ];
  if (list.length === 0) lines.push('  none yet: seed some (/learning seed <file>), or let the agent propose them (memory_learn, reflected lessons)');
  else lines.push(`  ${'id'.padEnd(6)} ${'state'.padEnd(11)} ${'conf.'.padEnd(5)}  ${'won'.padStart(7)}  ${'class'.padEnd(12)} text`, ...list.map(methodologyRow));
  const proposed = list.filter((m) => m.state === 'candidate' && m.graduationProposedAt);
  if (proposed.length > 0) lines.push(`Proposed for graduation: ${proposed.map((m) => `#${m.id}`).join(', ')} (graduate <id> applies it).`);
  const review = list.filter((m) => m.state === 'proposed');
  if (review.length > 0) lines.push(`Proposed from outcomes, waiting for your review: ${review.map((m) => `#${m.id}`).join(', ')} (accept <id> puts it on trial; quarantine <id> turns it down).`);
  lines.push(`Trade cases pending reflection: ${pending.length}${pending.length === 200 ? '+' : ''}${pending.length > 0 ? ` (oldest closed ${pending[0]!.closedAt})` : ''}`);
  return lines.join('\n');
}

/**
 * Run one learning verb against the app's default tenant. `args` are the words after `learning`.
 */
export async function learningCommand(app: MinaraApp, args: readonly string[], flags: LearningFlags = {}): Promise<LearningOutput> {
  const learning = app.learning;
  if (!learning) return { text: 'The learning loop is off in this app (createApp({ learning: false })).', ok: true };
  const [verb = 'list', arg, ...rest] = args;
  const decision = verb === 'accept' || verb === 'graduate' || verb === 'quarantine' || verb === 'reinstate';
  if (!decision && (flags.reason !== undefined || flags.force)) return usage(`${LEARNING_USAGE} (--reason and --force apply to accept, graduate, quarantine and reinstate)`);
  if (decision) {
    const n = id(arg);
    if (n === undefined || rest.length > 0) return usage(`learning ${verb} <id>${verb === 'graduate' ? ' [--force]' : ''} [--reason text]`);
    if (flags.force && verb !== 'graduate') return usage(`--force only applies to graduate`);
    const m = verb === 'graduate'
      ? await learning.graduateMethodology(n, { ...(flags.force ? { force: true } : {}), ...(flags.reason !== undefined ? { reason: flags.reason } : {}) })
      : verb === 'accept' ? await learning.acceptMethodology(n, flags.reason)
      : verb === 'quarantine' ? await learning.quarantineMethodology(n, flags.reason) : await learning.reinstateMethodology(n, flags.reason);
    return { text: `Methodology #${m.id} is now ${m.state}.\n${methodologyRow(m)}`, ok: true };
  }
  switch (verb) {
    case 'list': {
      if (rest.length > 0 || (arg !== undefined && !METHODOLOGY_STATES.includes(arg as MethodologyState))) return usage(`learning list [${METHODOLOGY_STATES.join('|')}]`);
      return { text: await overview(learning, arg as MethodologyState | undefined), ok: true };
    }
    case 'cases': {
      if (rest.length > 0 || (arg !== undefined && arg !== 'pending' && arg !== 'reflected')) return usage('learning cases [pending|reflected]');
      const status = (arg ?? 'pending') as 'pending' | 'reflected';
      const cases = await learning.listCases({ status, limit: 50 });
      if (cases.length === 0) return { text: `No ${status} trade cases.`, ok: true };
      const rows = cases.map((c) =>
        `  #${String(c.id).padEnd(5)} ${c.closedAt.slice(0, 16)} ${c.role.padEnd(14)} ${c.asset.padEnd(8)} ${c.outcome.padEnd(5)} ${`${c.realizedPnlUsd >= 0 ? '+' : ''}${c.realizedPnlUsd.toFixed(2)}`.padStart(9)} USD${c.classification ? `  [${c.classification}]` : ''}`);
      return { text: [`${status === 'pending' ? 'Pending' : 'Reflected'} trade cases (newest 50):`, ...rows].join('\n'), ok: true };
    }
    case 'seed': {
      if (arg === undefined || rest.length > 0) return usage('learning seed <file>   (markdown "## <asset_class>" sections of "- <methodology>" lines, or JSON [{ assetClass, text }])');
      const r = await learning.seedMethodologies(await readFile(arg, 'utf8'), { sourceRef: arg });
      return { text: `Seeded ${r.created} methodologies (${r.existing} already known) from ${arg}.`, ok: true };
    }
    case 'reflect': {
      const limit = arg === undefined ? 10 : id(arg);
      if (limit === undefined || rest.length > 0) return usage('learning reflect [limit]');
      if (!app.modelStatus.configured) return { text: 'The role reflector needs a model: configure one (MINARA_MODEL and a provider key), then run it again.', ok: true };
      const r = await learning.reflect({ limit });
      return { text: `Reflected ${r.reflected} cases: ${r.lessons} lessons, ${r.methodologies} new methodologies; ${r.failed} failed (they stay pending), ${r.skipped} reflected elsewhere first.`, ok: true };
    }
    case 'synthesize': {
      if (arg !== undefined || rest.length > 0) return usage('learning synthesize');
      if (!app.modelStatus.configured) return { text: 'Methodology synthesis needs a model: configure one (MINARA_MODEL and a provider key), then run it again.', ok: true };
      const r = await learning.synthesize({ admit: () => app.admitAutonomousTurn() });
      const lines = r.patterns.slice(0, 10).map((p) => `  ${p.winning ? '+' : ' '} ${p.key}: ${p.wins}/${p.cases} won, Wilson ${p.confidence.toFixed(3)}${p.methodologyId !== undefined ? `, methodology #${p.methodologyId}` : ''}`);
      const head = r.skipped
        ? `No model call: ${r.skipped}.`
        : `Offered ${r.offered} winning patterns: ${r.proposed} methodologies proposed (candidates; graduate them with "learning graduate <id>"), ${r.existing} already known, ${r.dropped} dropped${r.failed ? '; the model answer was unusable, nothing changed' : ''}.`;
      return { text: [head, ...(lines.length > 0 ? ['Patterns of reflected cases (+ winning):', ...lines] : [])].join('\n'), ok: true };
    }
    case 'page': {
      if (arg === undefined || rest.length > 0) return usage('learning page <asset>   (BTC, ETH, EUR/USD)');
      return { text: (await learning.compiledPage(arg)).trimEnd(), ok: true };
    }
    default:
      return usage(LEARNING_USAGE);
  }
}

/** Run one preferences verb (`list`, `approve <id>`, `reject <id>`) against the app's default tenant. */
export async function preferencesCommand(app: MinaraApp, args: readonly string[]): Promise<LearningOutput> {
  const learning = app.learning;
  if (!learning) return { text: 'The learning loop is off in this app (createApp({ learning: false })).', ok: true };
  const [verb = 'list', arg, ...rest] = args;
  if (verb === 'approve' || verb === 'reject') {
    const n = id(arg);
    if (n === undefined || rest.length > 0) return usage(`preferences ${verb} <id>`);
    const p = verb === 'approve' ? await learning.approvePreference(n) : await learning.rejectPreference(n);
    return { text: `Preference #${p.id} is now ${p.state}.${p.kind === 'hard_constraint' && p.state === 'active' ? ' Its finance limits apply from the next call.' : ''}\n${preferenceRow(p)}`, ok: true };
  }
  if (verb !== 'list' || rest.length > 0 || (arg !== undefined && !PREFERENCE_STATES.includes(arg as PreferenceState))) return usage(PREFERENCES_USAGE);
  const list = await learning.listPreferences({ ...(arg ? { states: [arg as PreferenceState] } : {}), limit: 200 });
  if (list.length === 0) return { text: `No ${arg ?? ''}${arg ? ' ' : ''}preferences yet: the agent proposes them from your trades (slippage, leverage, memecoins) or when you state one.`, ok: true };
  const proposed = list.filter((p) => p.state === 'proposed');
  return {
    text: [
      `Preferences: ${list.length}   (evidence+/contradictions-; behavioural ones activate on their own after enough consistent evidence, hard constraints only when you approve them)`,
      ...list.map(preferenceRow),
      ...(proposed.length > 0 ? [`Proposed: ${proposed.map((p) => `#${p.id}`).join(', ')} (approve <id> / reject <id>).`] : []),
    ].join('\n'),
    ok: true,
  };
}

/** `minara learning …` / `minara preferences …`: build the app, run the verb, print, close. */
export async function runLearningCli(cli: CliOptions, command: 'learning' | 'preferences', positionals: readonly string[], flags: LearningFlags & {
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
}): Promise<number> {
  const write = flags.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = flags.writeErr ?? ((s: string) => process.stderr.write(s));
  const { buildApp } = await import('./app');
  const app = await buildApp(cli, { surface: 'cli', mcp: false });
  try {
    const out = command === 'learning' ? await learningCommand(app, positionals, flags) : await preferencesCommand(app, positionals);
    if (!out.ok) {
      writeErr(`minara: ${out.text.replace(/^usage: /, `usage: minara `)}\n`);
      return 2;
    }
    write(`${out.text}\n`);
    return 0;
  } catch (error) {
    const e = error as { code?: unknown };
    writeErr(`minara: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await app.close();
  }
}
