/**
 * Turning write inputs into engine rows: validation and everything derived from the content (index text,
 * hash, initial embedding state, edges). Shared by `write`, `writeMany` and the fact layer; it throws before
 * anything is stored.
 */
import { MinaraError } from '../errors/minara-error';
import type { EmbeddingState, MemoryRecord, MemoryStatus, NewMemoryRow } from '../storage/memory-types';
import { extractMemoryEdges } from './edges';
import { FACT_CATEGORY } from './fact-layer';
import { toHit } from './search';
import { buildSearchText, contentHash, normalizeContent } from './text';
import type { MemoryItem, MemoryWriteInput } from './types';
import { CATEGORY_PATTERN, validateContent, validateMetadata, validateName } from './validate';

/** A record as the item `get`/`update` return. */
export function toItem(r: MemoryRecord): MemoryItem {
  const { score: _s, ...hit } = toHit(r, 0);
  return {
    ...hit,
    status: r.status,
    embeddingState: r.embeddingState,
    ...(r.deletedAt === undefined ? {} : { deletedAt: r.deletedAt }),
    ...(r.retiredAt === undefined ? {} : { retiredAt: r.retiredAt }),
    ...(r.supersededBy === undefined ? {} : { supersededBy: r.supersededBy }),
  };
}

/** Throw MEMORY_INVALID unless `value` is a plain object. */
export function checkObject(name: string, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MinaraError('MEMORY_INVALID', `\`${name}\` must be an object`);
}

/** A row to prepare (`forceSource` overrides `source` and `metadata.source`). */
export type RowInput = { category: string; content: unknown; metadata: unknown; source: unknown; status: MemoryStatus; forceSource?: string };

/** `skipped` for content too short to embed, else `pending`. */
export function initialEmbeddingState(content: string): EmbeddingState {
  return normalizeContent(content).length < 3 ? 'skipped' : 'pending';
}

/** The row preparer of one store. */
export function createRowPreparer(options: { maxContentBytes: number; now: () => string }) {
  const { maxContentBytes, now } = options;
  const resolveSource = (explicit: unknown, metadata: Record<string, unknown> | undefined): string | undefined => {
    if (explicit !== undefined) return validateName('source', explicit);
    const fromMeta = metadata?.['source'];
    return typeof fromMeta === 'string' && CATEGORY_PATTERN.test(fromMeta) ? fromMeta : undefined;
  };

  /** Validate one input and derive everything the engine stores; throws before any write. */
  const prepareRow = (input: RowInput): NewMemoryRow => {
    const content = validateContent(input.content, maxContentBytes);
    const metadata = validateMetadata(input.metadata);
    const source = input.forceSource ?? resolveSource(input.source, metadata);
    return {
      category: input.category,
      content,
      searchText: buildSearchText(content),
      ...(metadata === undefined ? {} : { metadata }),
      ...(source === undefined ? {} : { source }),
      status: input.status,
      contentHash: contentHash(content),
      embeddingState: initialEmbeddingState(content),
      edges: extractMemoryEdges(content, metadata),
      now: now(),
    };
  };
  /** A `write` input as a row: `fact` rows are pending, agent-recorded facts (as `recordFact` stores them). */
  const writeInput = (input: MemoryWriteInput): RowInput => {
    checkObject('input', input);
    const category = validateName('category', input.category);
    return category === FACT_CATEGORY
      ? { category, content: input.content, metadata: input.metadata, source: undefined, status: 'pending', forceSource: 'agent_recorded' }
      : { category, content: input.content, metadata: input.metadata, source: input.source, status: 'active' };
  };

  return { prepareRow, writeInput };
}
