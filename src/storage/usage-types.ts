/** One turn's token usage and cost, as recorded after the turn. */
export interface UsageEntry {
  readonly turnId: string;
  readonly sessionId: string;
  readonly userId: string;
  readonly source: string;
  /** The model that answered (`turn-end.modelId`), or the configured one. */
  readonly modelId: string;
  /** ISO time the turn ended. */
  readonly at: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** USD by the price table; 0 when the model has no price. */
  readonly costUsd: number;
}

/** Sums over recorded turns. */
export interface UsageTotals {
  readonly turns: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly costUsd: number;
}

/** The usage ledger: one row per turn (recording a turn twice keeps the first), summed by day, session, user or source. */
export interface UsageStorage {
  /** Record a turn; false when that turn id is already recorded. */
  record(entry: UsageEntry): Promise<boolean>;
  /** Totals of the matching turns. `day` is a UTC date (`2026-03-02`). */
  totals(query?: { readonly day?: string | undefined; readonly sessionId?: string | undefined; readonly userId?: string | undefined; readonly sources?: readonly string[] | undefined }): Promise<UsageTotals>;
  /** Totals of one UTC day per user (users with a turn that day), by user id. */
  byUser(query: { readonly day: string; readonly sources?: readonly string[] | undefined }): Promise<UserUsageTotals[]>;
}

/** One user's totals, as {@link UsageStorage.byUser} lists them. */
export interface UserUsageTotals {
  readonly userId: string;
  readonly totals: UsageTotals;
}
