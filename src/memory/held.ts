/**
 * The review queue of memories the model wrote after reading untrusted content (issue 38): `memory_write` stores
 * them with source `proposed` (`PROPOSED_MEMORY_SOURCE`), out of every prompt and out of `memory_search` /
 * `memory_read`, until an operator accepts or rejects them (CLI `minara memory review|accept|reject`, HTTP
 * `POST /v1/memory/:id/accept|reject` with the decide capability, the web Memory page).
 */
import { MinaraError } from '../errors/minara-error';
import type { MemoryHit, MemoryItem, MemoryStore } from './types';

/** The source of a memory held for review (written by the model after it read untrusted content). */
export const PROPOSED_MEMORY_SOURCE = 'proposed';
/** The category a held `fact` waits under, so the fact layer never consolidates it before it is accepted. */
export const PROPOSED_FACT_CATEGORY = 'proposed_fact';

/** What accepting a held memory did. */
export interface HeldMemoryDecision {
  /** The held row. */
  readonly id: number;
  readonly decision: 'accepted' | 'rejected';
  /** The row that now reaches prompts: the same id, or the recorded fact's id for a held fact. */
  readonly memoryId?: number | undefined;
}

async function held(store: MemoryStore, id: number, op: string): Promise<MemoryItem> {
  if (!Number.isSafeInteger(id) || id < 1) throw new MinaraError('INVALID_ARGUMENT', `${op}: id must be a positive integer memory id, got ${String(id)}`);
  const row = await store.get(id);
  if (!row) throw new MinaraError('NOT_FOUND', `${op}: no memory ${id} for this user`);
  if (row.source !== PROPOSED_MEMORY_SOURCE) throw new MinaraError('INVALID_ARGUMENT', `${op}: memory ${id} is not held for review (source ${row.source ?? 'none'})`);
  return row;
}

/** The memories held for review, newest first. */
export async function listHeldMemories(store: MemoryStore, options: { readonly limit?: number | undefined } = {}): Promise<MemoryHit[]> {
  return store.read({ source: PROPOSED_MEMORY_SOURCE, limit: options.limit ?? 100 });
}

/**
 * Accept a held memory: it becomes an ordinary `agent_recorded` memory that reaches prompts (a held fact is
 * recorded through the fact layer and the held row removed). The review marks stay in its metadata.
 */
export async function acceptHeldMemory(store: MemoryStore, id: number): Promise<HeldMemoryDecision> {
  const row = await held(store, id, 'acceptHeldMemory');
  const { review: _review, proposedCategory, ...rest } = row.metadata ?? {};
  const metadata = { ...rest, reviewed: 'accepted' };
  if (row.category === PROPOSED_FACT_CATEGORY || proposedCategory === 'fact') {
    const fact = await store.recordFact(row.content, { metadata, source: 'agent_recorded' });
    await store.hardDelete(id);
    return { id, decision: 'accepted', memoryId: fact.id };
  }
  await store.update(id, { source: 'agent_recorded', metadata });
  return { id, decision: 'accepted', memoryId: id };
}

/** Reject a held memory: soft-deleted (restorable for the retention period, then purged); it never reaches a prompt. */
export async function rejectHeldMemory(store: MemoryStore, id: number): Promise<HeldMemoryDecision> {
  await held(store, id, 'rejectHeldMemory');
  await store.softDelete(id);
  return { id, decision: 'rejected' };
}
