import { randomBytes } from 'node:crypto';
import type { ArtifactKind } from '../storage/artifact-types';

/** The URI scheme of each artifact type: `chart://x-…`, `report://r-…`, `spreadsheet://x-…`. */
export const ARTIFACT_ID_PREFIX: Readonly<Record<ArtifactKind, 'x' | 'r'>> = Object.freeze({ chart: 'x', report: 'r', spreadsheet: 'x' });

/** What an artifact id looks like: `x-` or `r-` then 6–64 lowercase letters and digits. */
export const ARTIFACT_ID = /^[xr]-[a-z0-9]{6,64}$/;

const URI_IN_TEXT = /\b(chart|report|spreadsheet):\/\/([xr]-[a-z0-9]{6,64})(?![a-z0-9])/g;

/** One artifact reference found in text. */
export interface ArtifactReference {
  readonly kind: ArtifactKind;
  readonly id: string;
  readonly uri: string;
}

/** A new artifact id for a kind: `x-` (chart, spreadsheet) or `r-` (report) + 16 random base-36 characters. */
export function newArtifactId(kind: ArtifactKind): string {
  const bytes = randomBytes(16);
  let s = '';
  for (const b of bytes) s += (b % 36).toString(36);
  return `${ARTIFACT_ID_PREFIX[kind]}-${s}`;
}

/** `chart://x-…` for a kind and an id. */
export function artifactUri(kind: ArtifactKind, id: string): string {
  return `${kind}://${id}`;
}

/**
 * Read an artifact URI (`chart://x-…`) or a bare id (`x-…`). Returns undefined when it is neither, or when the
 * scheme does not match the id's prefix (`report://x-…`).
 */
export function parseArtifactRef(value: string): { readonly kind?: ArtifactKind | undefined; readonly id: string } | undefined {
  const v = value.trim();
  if (ARTIFACT_ID.test(v)) return { id: v };
  const m = /^(chart|report|spreadsheet):\/\/([xr]-[a-z0-9]{6,64})$/.exec(v);
  if (!m) return undefined;
  const kind = m[1] as ArtifactKind;
  if (ARTIFACT_ID_PREFIX[kind] !== m[2]![0]) return undefined;
  return { kind, id: m[2]! };
}

/**
 * Every distinct artifact URI in a text, in order of first appearance (what the materializer scans a final
 * message for). A URI whose scheme does not match its id's prefix is skipped.
 *
 * @example
 * ```ts
 * findArtifactUris('See chart://x-abc123def and report://r-9zz8yy7xx.');
 * // [{ kind: 'chart', id: 'x-abc123def', uri: 'chart://x-abc123def' }, { kind: 'report', … }]
 * ```
 */
export function findArtifactUris(text: string): ArtifactReference[] {
  const out: ArtifactReference[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(URI_IN_TEXT)) {
    const kind = m[1] as ArtifactKind;
    const id = m[2]!;
    if (ARTIFACT_ID_PREFIX[kind] !== id[0] || seen.has(id)) continue;
    seen.add(id);
    out.push({ kind, id, uri: artifactUri(kind, id) });
  }
  return out;
}
