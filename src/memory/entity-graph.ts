/**
 * Queries over the typed memory edges: the neighbourhood of one entity and the most-referenced entities.
 * Only visible memories (not soft-deleted, not retired) of the scope count.
 */
import { MinaraError } from '../errors/minara-error';
import type { MemoryRecord, MemoryScope, MemoryStorage } from '../storage/memory-types';
import { normalizeEntity } from './entities';
import type { EntityNeighborhood } from './types';
import { validateLimit } from './validate';

/**
 * Memories pointing at `entity` and the other entities they point at.
 * `entity` may be `BTC`, `$btc`, `bitcoin`, `EUR/USD`, `Base`, an address or a scenario id.
 */
export async function entityNeighborhood(storage: MemoryStorage, scope: MemoryScope, entity: unknown, limitInput?: number): Promise<EntityNeighborhood> {
  if (typeof entity !== 'string' || entity.trim().length === 0 || entity.length > 200) {
    throw new MinaraError('MEMORY_INVALID', '`entity` must be a non-empty string of at most 200 characters');
  }
  const limit = validateLimit(limitInput, 20);
  const normalized = normalizeEntity(entity);
  const raw = entity.trim();
  const keys = Array.from(new Set([normalized.key, raw, raw.toLowerCase(), raw.toUpperCase()]));
  let edges: Awaited<ReturnType<MemoryStorage['edgesForEntity']>> = [];
  let matchedKey = normalized.key;
  for (const key of keys) {
    edges = await storage.edgesForEntity(scope, key, { entityKind: key === normalized.key ? normalized.kind : undefined, limit: limit * 8 });
    if (edges.length > 0) {
      matchedKey = key;
      break;
    }
  }
  const order: number[] = [];
  const types = new Map<number, string[]>();
  for (const e of edges) {
    if (!types.has(e.memoryId)) {
      if (order.length >= limit) continue;
      order.push(e.memoryId);
      types.set(e.memoryId, []);
    }
    const list = types.get(e.memoryId) as string[];
    if (!list.includes(e.edgeType)) list.push(e.edgeType);
  }
  const records = new Map((await storage.getMany(scope, order)).map((r) => [r.id, r]));
  const memories = order
    .map((id) => records.get(id))
    .filter((r): r is MemoryRecord => r !== undefined && r.deletedAt === undefined)
    .map((r) => ({ id: r.id, edgeTypes: types.get(r.id) ?? [], category: r.category, content: r.content, updatedAt: r.updatedAt }));
  const relatedCounts = new Map<string, { kind: string; key: string; mems: Set<number> }>();
  for (const e of await storage.edgesForMemories(scope, order)) {
    if (e.entityKind === 'ticker_pair' || e.entityKey === matchedKey) continue;
    const id = `${e.entityKind}\u0000${e.entityKey}`;
    let g = relatedCounts.get(id);
    if (g === undefined) relatedCounts.set(id, (g = { kind: e.entityKind, key: e.entityKey, mems: new Set() }));
    g.mems.add(e.memoryId);
  }
  const related = Array.from(relatedCounts.values())
    .map((g) => ({ kind: g.kind, key: g.key, count: g.mems.size }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { entity: { ...(normalized.kind === undefined ? {} : { kind: normalized.kind }), key: matchedKey }, memories, related };
}

/** Entities most visible memories point at (`ticker_pair` edges only when `kind` asks for them). */
export async function topEntities(
  storage: MemoryStorage,
  scope: MemoryScope,
  options: { limit?: number; kind?: string } = {},
): Promise<Array<{ kind: string; key: string; count: number; edgeTypes: Readonly<Record<string, number>> }>> {
  const limit = validateLimit(options.limit, 20);
  const rows = await storage.topEntities(scope, { entityKind: options.kind, limit });
  return rows.map((r) => ({ kind: r.entityKind, key: r.entityKey, count: r.memoryCount, edgeTypes: r.edgeTypes }));
}
