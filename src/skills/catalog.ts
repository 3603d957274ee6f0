/**
 * Catalog blocks: the list of skills the model chooses from. They sit in the cached prompt prefix, so
 * the output is a pure function of its input: no timestamps, stable sorting, one line per skill.
 */
import { compareIds } from './router';
import type { RoutedCatalogEntry, Skill } from './types';

/** Activation state to tag in a catalog (`(active)`, `(active, body shed)`). */
export interface CatalogState {
  readonly active: ReadonlySet<string> | readonly string[];
  readonly shed?: ReadonlySet<string> | readonly string[] | undefined;
}

/** Options shared by both catalog blocks. */
export interface CatalogRenderOptions {
  /** Tag active and shed skills; shed skills also show their summary. */
  readonly state?: CatalogState | undefined;
  /** Show at most this many entries (the rest are counted in a final line). @default all */
  readonly limit?: number | undefined;
  /** Show the routing reasons as inline hints. @default true (routed block only) */
  readonly reasons?: boolean | undefined;
  /** The heading line. @default '## Skills' */
  readonly heading?: string | undefined;
}

const INSTRUCTIONS =
  'Call `activate_skills` with the ids of the skills this request needs. Activation loads their playbooks ' +
  'and surfaces their tools; each call replaces the loaded set. Activation is not authorisation: every ' +
  'tool still runs through its permission tier. Tools outside the list are reachable with `tool_invoke`.';

/** Skills in catalog order: priority asc, then id. */
export function sortSkillsForCatalog(skills: readonly Skill[]): Skill[] {
  return [...skills].sort((a, b) => a.priority - b.priority || compareIds(a.id, b.id));
}

/**
 * The unrouted catalog: every auto-activation skill, in priority order. Stable across turns.
 *
 * @example
 * ```ts
 * renderCatalog(skills.list());
 * // ## Skills\n…\n<available_skills>\n- minara.core: Unified Minara API …\n</available_skills>
 * ```
 */
export function renderCatalog(skills: readonly Skill[], options: CatalogRenderOptions = {}): string {
  const list = sortSkillsForCatalog(skills.filter((s) => s.activation === 'auto'));
  return render(
    list.map((s) => ({ skill: s, reasons: [] })),
    options,
  );
}

/**
 * The routed catalog: the router's entries, best first, each with its reasons as an inline hint.
 * Entries whose id is unknown are skipped.
 */
export function renderRoutedCatalog(
  entries: readonly RoutedCatalogEntry[],
  skills: ReadonlyMap<string, Skill> | ((id: string) => Skill | undefined),
  options: CatalogRenderOptions = {},
): string {
  const lookup = typeof skills === 'function' ? skills : (id: string) => skills.get(id);
  const rows: Row[] = [];
  for (const e of entries) {
    const skill = lookup(e.id);
    if (skill) rows.push({ skill, reasons: options.reasons === false ? [] : e.reasons });
  }
  return render(rows, options);
}

interface Row {
  readonly skill: Skill;
  readonly reasons: readonly string[];
}

function render(rows: readonly Row[], options: CatalogRenderOptions): string {
  const active = toSet(options.state?.active);
  const shed = toSet(options.state?.shed);
  const limit = options.limit ?? rows.length;
  const shown = rows.slice(0, Math.max(0, limit));
  const lines = [options.heading ?? '## Skills', INSTRUCTIONS, '<available_skills>'];
  for (const { skill, reasons } of shown) {
    let line = `- ${skill.id}: ${oneLine(skill.description)}`;
    if (active.has(skill.id)) line += shed.has(skill.id) ? ' (active, body shed)' : ' (active)';
    if (reasons.length > 0) line += ` [${reasons.join(', ')}]`;
    if (shed.has(skill.id) && active.has(skill.id) && skill.summary) line += `\n  Summary: ${oneLine(skill.summary)}`;
    lines.push(line);
  }
  if (rows.length > shown.length) lines.push(`- … ${rows.length - shown.length} more (activate by id)`);
  lines.push('</available_skills>');
  return lines.join('\n');
}

function toSet(v: ReadonlySet<string> | readonly string[] | undefined): ReadonlySet<string> {
  if (!v) return new Set();
  return v instanceof Set ? v : new Set(v as readonly string[]);
}

// Descriptions are fixed once a skill is registered and the catalog is rendered at every turn: flatten each once.
const oneLines = new Map<string, string>();
const MAX_ONE_LINES = 4096;

function oneLine(s: string): string {
  let line = oneLines.get(s);
  if (line === undefined) {
    line = s.replace(/\s+/g, ' ').trim();
    if (oneLines.size >= MAX_ONE_LINES) oneLines.clear();
    oneLines.set(s, line);
  }
  return line;
}
