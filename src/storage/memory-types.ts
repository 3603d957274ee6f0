/**
 * The memory domain of {@link Storage}. OWNED BY THE MEMORY ISSUE: this placeholder is replaced
 * with the full contract (memories, user_profile, FTS, edges, consolidation events, vectors).
 */
// biome-ignore lint: placeholder until the memory domain lands
export interface MemoryStorage {
  /** Engine-level readiness of the memory domain. */
  readonly ready: boolean;
}
