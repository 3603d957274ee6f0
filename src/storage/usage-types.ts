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
  /**
   * Admit one turn against a USD-per-day limit and reserve its estimated cost, atomically (one transaction:
   * `BEGIN IMMEDIATE` on SQLite, under an advisory lock on PostgreSQL), so turns admitted in parallel — in one
   * process, several processes on one SQLite file, or several instances on one PostgreSQL — all count. Admitted when
   * the ledger's matching spend plus the scope's live reservations is below the limit. The estimate is the largest
   * matching turn of the day; with none yet, all that is left of the limit (so the day's first turn runs alone until
   * its real cost is known). Expired reservations (a process that died) are dropped first.
   */
  reserve(request: SpendReservationRequest): Promise<SpendReservation>;
  /** Keep a live reservation from expiring (a turn still running); false when it is gone. */
  renewReservation(id: string, expiresAt: string): Promise<boolean>;
  /** Drop a reservation (its turn ended: the ledger now holds the real cost; or it failed or was aborted). */
  releaseReservation(id: string): Promise<boolean>;
}

/** What {@link UsageStorage.reserve} admits against. */
export interface SpendReservationRequest {
  /** The reservation's id (unique). */
  readonly id: string;
  /** The limit it counts against, e.g. `user:alice` or `autonomous`; reservations of one scope and day add up. */
  readonly scope: string;
  /** The UTC day (`2026-03-02`). */
  readonly day: string;
  /** The ledger rows counted as spent: this user's (all users when absent) … */
  readonly userId?: string | undefined;
  /** … of these sources. */
  readonly sources: readonly string[];
  /** USD per day. */
  readonly limitUsd: number;
  /** ISO time now; reservations that expired by then are dropped. */
  readonly now: string;
  /** ISO time the reservation lapses unless renewed. */
  readonly expiresAt: string;
}

/** The answer of {@link UsageStorage.reserve}. */
export interface SpendReservation {
  readonly admitted: boolean;
  /** The ledger spend counted. */
  readonly spentUsd: number;
  /** The scope's other live reservations. */
  readonly reservedUsd: number;
  /** What this reservation holds (0 when refused). */
  readonly amountUsd: number;
}

/** One user's totals, as {@link UsageStorage.byUser} lists them. */
export interface UserUsageTotals {
  readonly userId: string;
  readonly totals: UsageTotals;
}
