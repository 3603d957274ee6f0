/**
 * The memory module: `createMemoryStore` and its parts (query sanitiser, entity extraction, ranking,
 * snapshot, edges, fact consolidator). Explicit named exports only.
 */
export { createMemoryStore } from './store';
export { createMemoryTools, MEMORY_TOOL_NAMES, type MemoryToolsOptions } from './tools';
export { acceptHeldMemory, type HeldMemoryDecision, listHeldMemories, PROPOSED_FACT_CATEGORY, PROPOSED_MEMORY_SOURCE, rejectHeldMemory } from './held';
export { createFactConsolidator, MAX_GUIDANCE_CHARS, MAX_RETIREMENTS_PER_FACT, type ConsolidationContext, type ConsolidationVerdict, type FactConsolidator, type FactConsolidatorOptions } from './consolidator';
export { extractFinanceEntities, normalizeEntity, type FinanceEntity, type FinanceEntityKind } from './entities';
export { extractMemoryEdges, MAX_CO_OCCURRING_TICKERS, MAX_EDGES_PER_CONTENT, type MemoryEdgeType } from './edges';
export { parseSearchQuery, type ParsedQuery } from './query';
export { applyEntityBoost, ENTITY_BOOST, reciprocalRankFusion, RRF_K } from './ranking';
export { MEMORY_CONTEXT_CLOSE, MEMORY_CONTEXT_OPEN, MEMORY_SYSTEM_NOTE, renderMemorySnapshot, SNAPSHOT_LIMIT, type SnapshotInput } from './snapshot';
export { buildSearchText, contentHash, indexTerm, indexTerms, labelTerms, normalizeContent, tokenize } from './text';
export { BM25_B, BM25_K1, LABEL_WEIGHT, NEIGHBOUR_DECAY, NEIGHBOUR_WEIGHT, QUESTION_ROW_FACTOR, rankBruteForce, type RankDoc, type RankedId, type RankOptions } from './lexical-rank';
export { CATEGORY_PATTERN, DEFAULT_MAX_CONTENT_BYTES, MAX_LIMIT } from './validate';
export type {
  ConsolidationResult,
  EntityNeighborhood,
  LoadSnapshotOptions,
  MemoryCategory,
  MemoryHit,
  MemoryItem,
  MemoryReadOptions,
  MemorySearchInfo,
  MemorySearchMode,
  MemorySearchOptions,
  MemorySnapshot,
  MemorySource,
  MemoryStore,
  MemoryStoreOptions,
  MemoryUpdateInput,
  MemoryWriteInput,
} from './types';
export type {
  ConsolidationDecision,
  ConsolidationEvent,
  EmbeddingState,
  MemoryEdgeInput,
  MemoryQueryNode,
  MemoryRecord,
  MemoryScope,
  MemoryStatus,
  MemoryStorage,
  ProfileAuthor,
  ProfileEntry,
} from '../storage/memory-types';
