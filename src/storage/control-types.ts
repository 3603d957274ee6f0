/**
 * The `controls` domain: what an operator sets to limit an agent while nobody watches, kept in storage so every
 * process sharing the database enforces the same: the daily spend under each grant, capability switches (a
 * user's tool set turned off), per-user quotas and their request counters, and session locks (one turn per
 * session across a fleet of gateways).
 */

/** What {@link ControlStorage.reserveGrantSpend} answered. */
export interface GrantSpendReservation {
  /** True when the amount fitted under the cap and was added to the day's spend. */
  readonly reserved: boolean;
  /** The day's spend under the grant after the call (unchanged when not reserved). */
  readonly spentUsd: number;
}

/** One user's tool set turned off by an operator. */
export interface CapabilitySwitchRecord {
  readonly userId: string;
  readonly toolSet: string;
  /** ISO time it was turned off. */
  readonly disabledAt: string;
  readonly reason?: string | undefined;
  /** Who turned it off (a user id, `cli`, `sdk`). */
  readonly by?: string | undefined;
}

/** Per-user quota settings; a missing limit falls back to the gateway's default. */
export interface QuotaSettingsRecord {
  readonly userId: string;
  /** User turns per minute; `null` means no limit for this user (overrides a default). */
  readonly requestsPerMinute?: number | null | undefined;
  /** USD of model spend per UTC day on user turns; `null` means no limit for this user. */
  readonly usdPerDay?: number | null | undefined;
  readonly updatedAt: string;
}

/** What {@link ControlStorage.countRequest} answered. */
export interface RequestCount {
  /** True when the request was counted (the window had room). */
  readonly allowed: boolean;
  /** Requests counted in the window, this one included when allowed. */
  readonly count: number;
}

/** Operator controls, shared by every process on the storage. Each write is atomic across processes. */
export interface ControlStorage {
  /**
   * Add `amountUsd` to the grant's spend on `day` (UTC `YYYY-MM-DD`) only if the total stays at or under `capUsd`
   * (no cap: always). Atomic across processes: two racing reservations never both pass a cap only one fits under.
   */
  reserveGrantSpend(input: { readonly grantId: string; readonly day: string; readonly amountUsd: number; readonly capUsd?: number | undefined }): Promise<GrantSpendReservation>;
  /** Give back a reservation whose call did not execute (never below zero). */
  refundGrantSpend(input: { readonly grantId: string; readonly day: string; readonly amountUsd: number }): Promise<void>;
  /** What executed under the grant on `day`, in USD (0 when nothing did). */
  grantSpend(grantId: string, day: string): Promise<number>;

  /** Turn a user's tool set off (`enabled: false`) or back on; true when that changed anything. */
  setCapability(input: { readonly userId: string; readonly toolSet: string; readonly enabled: boolean; readonly at: string; readonly reason?: string | undefined; readonly by?: string | undefined }): Promise<boolean>;
  /** The tool sets turned off, for one user or everyone, by user then tool set. */
  listDisabledCapabilities(query?: { readonly userId?: string | undefined }): Promise<CapabilitySwitchRecord[]>;

  /** One user's quota settings, if any were stored. */
  getQuota(userId: string): Promise<QuotaSettingsRecord | undefined>;
  /** Store (replace) one user's quota settings. */
  setQuota(settings: QuotaSettingsRecord): Promise<void>;
  /** Every user with stored quota settings, by user id. */
  listQuotas(): Promise<QuotaSettingsRecord[]>;
  /**
   * Count one request against `limit` in the window `window` (e.g. the UTC minute `2026-03-02T10:04`) of `key`:
   * counted only while the window has fewer than `limit`. Atomic across processes. Old windows are pruned.
   */
  countRequest(input: { readonly key: string; readonly window: string; readonly limit: number }): Promise<RequestCount>;
  /** Requests counted in the window so far. */
  requestCount(key: string, window: string): Promise<number>;

  /**
   * Take the lock of a session for `owner` until `leaseUntil`: true when it was free, expired (`leaseUntil` before
   * `now`) or already `owner`'s. Atomic across processes.
   */
  acquireSessionLock(input: { readonly sessionId: string; readonly owner: string; readonly now: string; readonly leaseUntil: string }): Promise<boolean>;
  /** Extend the lease; false when `owner` no longer holds it. */
  renewSessionLock(sessionId: string, owner: string, leaseUntil: string): Promise<boolean>;
  /** Release it; false when `owner` did not hold it. */
  releaseSessionLock(sessionId: string, owner: string): Promise<boolean>;
}

/** Tolerance when comparing sums of USD amounts to a cap (floating-point sums of cents). */
export const USD_EPSILON = 1e-9;
