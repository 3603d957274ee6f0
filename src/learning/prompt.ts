import { MinaraError } from '../errors/minara-error';
import type { MethodologyRecord, PreferenceRecord } from '../storage/learning-types';

/** `0.612` as `0.61`; stable across engines and runs. */
const bound = (n: number) => n.toFixed(2);

/** One methodology as a prompt or page line: `#3 [graduated · Wilson 0.61 · 14/20 won] text`. */
export function methodologyLine(m: MethodologyRecord): string {
  const state = m.state === 'graduated' ? 'graduated' : m.graduationProposedAt !== undefined ? 'on trial, graduation proposed' : 'on trial';
  const record = m.uses > 0 ? ` · Wilson ${bound(m.confidence)} · ${m.wins}/${m.uses} won` : ' · no outcomes yet';
  return `#${m.id} [${state}${record}] ${oneLine(m.text)}`;
}

/** A preference as a prompt line: `[slippage] Caps slippage at 0.5% (50 bps) on trades`. */
export function preferenceLine(p: PreferenceRecord): string {
  return `[${p.dimension}${p.kind === 'hard_constraint' ? ', hard constraint' : ''}] ${oneLine(p.text)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/**
 * The learned block of a turn's dynamic tail (byte-identical for the same rows): methodologies for the
 * message's assets, then active preferences. Undefined when there is nothing to say.
 */
export function renderLearningBlock(input: {
  readonly assets: readonly string[];
  readonly classes: readonly string[];
  readonly methodologies: readonly MethodologyRecord[];
  readonly preferences: readonly PreferenceRecord[];
}): string | undefined {
  if (input.methodologies.length === 0 && input.preferences.length === 0) return undefined;
  const lines = ['## Learned from outcomes', 'Derived from past trades and behaviour; the workspace files above win on any conflict. Methodologies on trial are scored by the trades that use them.'];
  if (input.methodologies.length > 0) {
    const about = [...input.assets, ...input.classes.filter((c) => !input.assets.includes(c))].join(', ');
    lines.push('', `### Methodologies${about ? ` (${about})` : ''}`, ...input.methodologies.map((m) => `- ${methodologyLine(m)}`));
  }
  if (input.preferences.length > 0) lines.push('', '### Preferences', ...input.preferences.map((p) => `- ${preferenceLine(p)}`));
  return lines.join('\n');
}

/** One entry of a methodology seed. */
export interface MethodologySeedEntry {
  readonly assetClass: string;
  readonly text: string;
}

/**
 * Parse a methodology seed: JSON (`[{ "assetClass": "crypto_major", "text": "…" }]`), or markdown with
 * `## <asset_class>` headings over `- <methodology>` list items. Throws `LEARNING_INVALID` naming the line.
 *
 * @example
 * ```ts
 * parseMethodologySeed('## crypto_major\n- Buy pullbacks to the 20-day average in an uptrend.\n');
 * ```
 */
export function parseMethodologySeed(seed: string): MethodologySeedEntry[] {
  if (typeof seed !== 'string') throw new MinaraError('LEARNING_INVALID', 'seed: expected the text of a seed file (markdown or JSON)');
  const trimmed = seed.trim();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new MinaraError('LEARNING_INVALID', `seed: invalid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    if (!Array.isArray(parsed)) throw new MinaraError('LEARNING_INVALID', 'seed: expected a JSON array of { assetClass, text }');
    return parsed.map((e, i) => {
      const o = e as { assetClass?: unknown; text?: unknown } | null;
      if (typeof o?.assetClass !== 'string' || typeof o.text !== 'string' || o.text.trim() === '') {
        throw new MinaraError('LEARNING_INVALID', `seed[${i}]: expected { "assetClass": string, "text": non-empty string }`);
      }
      return { assetClass: o.assetClass.trim(), text: o.text.trim() };
    });
  }
  const out: MethodologySeedEntry[] = [];
  let cls: string | undefined;
  trimmed.split(/\r?\n/u).forEach((line, i) => {
    const heading = /^##\s+([a-z][a-z0-9_]*)\s*$/u.exec(line.trim());
    if (heading) {
      cls = heading[1];
      return;
    }
    const item = /^[-*]\s+(.+)$/u.exec(line.trim());
    if (!item) return;
    if (cls === undefined) throw new MinaraError('LEARNING_INVALID', `seed line ${i + 1}: a methodology before any "## <asset_class>" heading`);
    out.push({ assetClass: cls, text: item[1]!.trim() });
  });
  return out;
}
