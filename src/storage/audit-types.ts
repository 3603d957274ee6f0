/**
 * The audit trail beyond one row per dispatch: what a call did (its outcome), what else happened under a trace
 * (signals, skill activations, job runs, breakers), and the hash chain that makes a quiet edit visible.
 *
 * Every row is chained: `hash = sha256(prevHash + "\n" + canonical JSON of { seq, ...content })`, where the
 * content is every stored column but `id`, `seq`, `prev_hash` and `hash`, absent ones left out. Appends are
 * serialised per database (SQLite `BEGIN IMMEDIATE`, PostgreSQL a `FOR UPDATE` lock on the chain-head row), so two
 * processes never fork the chain. The head says how far the chain reaches, so deleting the newest rows is visible
 * too: on PostgreSQL the head row (`seq`, `hash`), moved in the same transaction; on SQLite the table's
 * AUTOINCREMENT counter (`sqlite_sequence`, never reused), to which each row's `seq` is bound.
 */

/** What kind of event a row records. Rows written before the kind existed read as `tool_call`. */
export type AuditKind =
  | 'tool_call'
  | 'signal'
  | 'skill_activation'
  | 'turn'
  | 'job_run'
  | 'breaker'
  | 'grant'
  | 'stop'
  | 'input_flag';

/** The fill of an executed order, normalised from whatever the tool returned. */
export interface AuditFill {
  /** Units filled. */
  readonly quantity?: number | undefined;
  /** Fill price in USD per unit. */
  readonly priceUsd?: number | undefined;
  readonly notionalUsd?: number | undefined;
  readonly feeUsd?: number | undefined;
  /** P&L this fill realised, as the provider accounted it (negative: a loss). */
  readonly realizedPnlUsd?: number | undefined;
  readonly symbol?: string | undefined;
  readonly side?: string | undefined;
}

/**
 * What a call did, extracted from the envelope its handler returned (`extractAuditOutcome`): status, order id,
 * fill, transaction hash, error code. Every field is optional; a read tool's outcome is just `{ status: 'ok' }`.
 */
export interface AuditOutcome {
  /** `ok`, `error`, `preview`, or the provider's order status (`filled`, `duplicate`, …). */
  readonly status?: string | undefined;
  /** The provider's order id (the client order id the order was placed with). */
  readonly orderId?: string | undefined;
  readonly fill?: AuditFill | undefined;
  /** On-chain transaction hash, when the provider reports one. */
  readonly txHash?: string | undefined;
  /** The envelope's error code when the call failed or was refused. */
  readonly errorCode?: string | undefined;
  /** The side of the order as the registry judged it (`buy`, `sell`, `close`, …), for fund-moving calls. */
  readonly orderSide?: string | undefined;
  /** The result says it was simulated (paper or shadow). */
  readonly simulated?: boolean | undefined;
  /** The order went to the shadow book (`MINARA_TRADING_MODE=shadow`). */
  readonly shadow?: boolean | undefined;
  /** The provider that answered (`paper`, `minara`, `shadow`, …). */
  readonly provider?: string | undefined;
}

/** Where a row sits in the hash chain (absent on rows written before the chain began). */
export interface AuditChainLink {
  /** Position in the chain, 1-based, contiguous. */
  readonly seq: number;
  /** The previous row's hash (64 zeros for the first). */
  readonly prevHash: string;
  /** sha256 hex over `prevHash` and this row's canonical content. */
  readonly hash: string;
}

/** The newest link of the chain, as the chain-head row records it. */
export interface AuditChainHead {
  /** How many chained rows exist (0 before the first). */
  readonly seq: number;
  /** The newest row's hash (64 zeros before the first). */
  readonly hash: string;
  /** Rows that existed when the chain began (unchained, reported as such by verify). */
  readonly legacyRows: number;
  /** The highest row id among them (0 when none). */
  readonly legacyMaxId: number;
  /**
   * The first seq whose link is keyed (HMAC-SHA256 with the audit chain key kept outside the database); rows
   * before it are linked with plain SHA-256 (written before keyed links began). Absent while no keyed row exists.
   */
  readonly keyedFrom?: number | undefined;
  /**
   * The id of the key the keyed links are made with (an HMAC of a fixed text under it, never the key), recorded when
   * the first instance with a key starts (`storage.audit.claimChainKey`) or appends. An instance holding another key
   * is refused (`CONFIG_INVALID`) before it appends.
   */
  readonly keyId?: string | undefined;
}

/** One thing `verify` found wrong. */
export interface AuditChainProblem {
  readonly kind:
    | 'edited' | 'deleted' | 'reordered' | 'inserted' | 'head_mismatch' | 'legacy_changed' | 'anchor_mismatch'
    /** The log ends before the newest signed checkpoint's seq: rows were deleted and the head rolled back. */
    | 'truncated'
    /** The row at the signed checkpoint's seq carries another hash: history up to it was rewritten. */
    | 'checkpoint_mismatch'
    /** Where keyed links begin differs from what the signed checkpoint recorded (a downgrade to plain SHA-256). */
    | 'key_downgrade'
    /**
     * The head records another key id than the verifier's key: the log was keyed by an instance holding another
     * key (verify with that one), or the head's key id was changed. The rows are still judged with this key.
     */
    | 'key_mismatch'
    /** A checkpoint line that fails its Ed25519 signature or does not parse (reported by `verifyAuditTrail`). */
    | 'checkpoint_invalid';
  /** The chain position where it shows. */
  readonly seq?: number | undefined;
  /** The row id, when a row shows it. */
  readonly id?: number | undefined;
  readonly message: string;
}

/** What {@link AuditStorage.verify} reports. */
export interface AuditVerifyReport {
  /** True when no problem was found. */
  readonly ok: boolean;
  /** Chained rows checked. */
  readonly checked: number;
  /** Rows written before the chain began: kept, listed, never verifiable. */
  readonly unchainedPrefix: number;
  readonly head: AuditChainHead;
  /** Problems, in chain order; at most 100 are listed. */
  readonly problems: readonly AuditChainProblem[];
  /**
   * The keyed part of the chain: from which seq links are HMAC-keyed, and whether the verifier held the key
   * (without it, keyed links are checked for order and linkage only, not recomputed). Rows before `from` are
   * legacy links (plain SHA-256), listed as `legacyLinks`.
   */
  readonly keyed?: { readonly from: number | undefined; readonly legacyLinks: number; readonly keyChecked: boolean } | undefined;
  /** The signed checkpoint the chain was checked against, when one was given. */
  readonly checkpoint?: { readonly seq: number; readonly hash: string } | undefined;
  /** The checkpoint lines read (`verifyAuditTrail`): how many, how many carried a valid signature, the newest. */
  readonly checkpoints?: { readonly read: number; readonly valid: number; readonly newest?: { readonly seq: number; readonly at: string; readonly instance: string } | undefined } | undefined;
}

/** Options of {@link AuditStorage.verify}. */
export interface AuditVerifyOptions {
  /**
   * A head recorded earlier and kept outside the database (`seq:hash`, as `minara audit verify` prints it).
   * The row at that position must still carry that hash: this catches a chain rewritten from the start.
   */
  readonly anchor?: string | undefined;
  /**
   * A signed checkpoint already checked against its public key (`verifyAuditTrail` does this): the log must reach
   * its seq, the row there must carry its hash, and keyed links must begin where it says.
   */
  readonly checkpoint?: { readonly seq: number; readonly hash: string; readonly keyedFrom?: number | undefined } | undefined;
  /** Called with every row walked, in id order (an inclusion proof builds its Merkle tree from the same walk). */
  readonly onRow?: ((row: AuditChainRow) => void) | undefined;
}

/** What {@link AuditStorage.useChainKey} takes. */
export interface AuditChainKeyOptions {
  /** The HMAC-SHA256 key of the links (at least 32 bytes), kept outside the database (`deriveAuditKeys`). */
  readonly key: Uint8Array;
  /** Called after each committed append of this storage, with the new seq (a checkpointer counts rows with it). */
  readonly onAppend?: ((seq: number) => void) | undefined;
  /** Only when no key was given yet (a tool registry keying with its approval key does not replace createApp's). */
  readonly ifUnkeyed?: boolean | undefined;
}

/** The raw stored content of one chained row, as the hash covers it (JSON columns as their stored text). */
export interface AuditChainRow {
  readonly id: number;
  readonly seq: number | null;
  readonly prevHash: string | null;
  readonly hash: string | null;
  /** Every other stored column, keyed by its camelCase name, absent when NULL. */
  readonly content: Readonly<Record<string, string | number>>;
}
