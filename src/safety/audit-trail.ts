/**
 * Reading the audit trail back for people: one trace in order ("what did the 14:03 alert do"), and exports of
 * a filtered range to JSONL (one row per line, chain links included, so a copy can be checked elsewhere) or CSV
 * (flat columns for a spreadsheet; written with `csv-stringify`, which quotes fields holding commas, quotes and
 * line breaks as RFC 4180 says and pairs with the `csv-parse` dependency already used to read uploads).
 */
import { MinaraError } from '../errors/minara-error';
import type { AuditEntry, AuditQuery, Storage } from '../storage/types';

/** A filter for listing and exporting: the query without paging fields. */
export type AuditFilter = Omit<AuditQuery, 'limit' | 'order' | 'afterId' | 'beforeId'>;

/** Options of {@link readAuditTrace}. */
export interface ReadAuditTraceOptions {
  /** Only this tenant's rows (a tenant reading its own trace). */
  readonly userId?: string | undefined;
  /** @default 1000 */
  readonly limit?: number | undefined;
}

/** Every row of one trace, oldest first: the signal, the skills it activated, each call with its result, the turn, the job run. */
export async function readAuditTrace(storage: Pick<Storage, 'audit'>, traceId: string, options: ReadAuditTraceOptions = {}): Promise<AuditEntry[]> {
  if (typeof traceId !== 'string' || traceId.trim() === '') throw new MinaraError('INVALID_ARGUMENT', 'readAuditTrace: traceId must be a non-empty string');
  return storage.audit.query({ traceId, order: 'oldest', limit: options.limit ?? 1000, ...(options.userId !== undefined ? { userId: options.userId } : {}) });
}

/** The flat columns of a CSV export, in order. */
export const AUDIT_CSV_COLUMNS = [
  'id', 'seq', 'at', 'kind', 'user_id', 'source', 'session_id', 'trace_id', 'tool_call_id', 'tool_name', 'tier', 'mode', 'decision', 'code', 'reason',
  'status', 'order_id', 'fill_symbol', 'fill_side', 'fill_quantity', 'fill_price_usd', 'fill_notional_usd', 'fill_fee_usd', 'fill_realized_pnl_usd',
  'tx_hash', 'error_code', 'simulated', 'shadow', 'provider', 'approval_id', 'duration_ms', 'args_json', 'detail_json', 'prev_hash', 'hash',
] as const;

/** One row as CSV cells (absent values empty). */
export function auditCsvRecord(e: AuditEntry): Array<string | number> {
  const o = e.outcome;
  const f = o?.fill;
  const cell = (v: string | number | boolean | undefined): string | number => (v === undefined ? '' : typeof v === 'boolean' ? String(v) : v);
  return [
    e.id, cell(e.chain?.seq), e.at, e.kind ?? 'tool_call', cell(e.userId), e.source, cell(e.sessionId), cell(e.traceId), cell(e.toolCallId), e.toolName, e.tier, cell(e.mode),
    e.decision, cell(e.code), cell(e.reason), cell(o?.status), cell(o?.orderId), cell(f?.symbol), cell(f?.side), cell(f?.quantity), cell(f?.priceUsd), cell(f?.notionalUsd),
    cell(f?.feeUsd), cell(f?.realizedPnlUsd), cell(o?.txHash), cell(o?.errorCode), cell(o?.simulated), cell(o?.shadow), cell(o?.provider), cell(e.approvalId), e.durationMs,
    e.argsJson, e.detail === undefined ? '' : JSON.stringify(e.detail), cell(e.chain?.prevHash), cell(e.chain?.hash),
  ];
}

/** Options of {@link exportAudit}. */
export interface ExportAuditOptions {
  readonly storage: Pick<Storage, 'audit'>;
  /** `jsonl`: one JSON row per line (chain links included). `csv`: a header and {@link AUDIT_CSV_COLUMNS}. */
  readonly format: 'jsonl' | 'csv';
  /** Which rows. @default every row */
  readonly filter?: AuditFilter | undefined;
  /** Receives the text in chunks (a file stream, stdout, an HTTP body). */
  readonly write: (chunk: string) => void | Promise<void>;
  /** Rows per page read from storage. @default 500 */
  readonly pageSize?: number | undefined;
}

/**
 * Export the rows a filter selects, oldest first, page by page (the whole log never sits in memory). Returns
 * how many rows were written.
 *
 * @example
 * ```ts
 * const out = createWriteStream('audit.csv');
 * await exportAudit({ storage, format: 'csv', filter: { since: '2026-11-01T00:00:00Z' }, write: (s) => void out.write(s) });
 * ```
 */
export async function exportAudit(options: ExportAuditOptions): Promise<number> {
  const { storage, format, filter = {}, write, pageSize = 500 } = options;
  if (format !== 'jsonl' && format !== 'csv') throw new MinaraError('INVALID_ARGUMENT', `exportAudit: format must be "jsonl" or "csv", got ${JSON.stringify(format)}`);
  const stringify = format === 'csv' ? (await import('csv-stringify/sync')).stringify : undefined;
  // `escape_formulas`: a cell starting with =, +, -, @, tab or CR (a tool argument the model wrote) is prefixed with a
  // quote, so a spreadsheet shows it as text instead of running it as a formula.
  const csv = stringify && ((records: Array<Array<string | number>>) => stringify(records, { escape_formulas: true }));
  if (csv) await write(csv([[...AUDIT_CSV_COLUMNS]]));
  let afterId = 0;
  let n = 0;
  for (;;) {
    const rows = await storage.audit.query({ ...filter, order: 'oldest', afterId, limit: pageSize });
    if (rows.length === 0) break;
    await write(csv ? csv(rows.map(auditCsvRecord)) : rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    n += rows.length;
    afterId = rows.at(-1)!.id;
    if (rows.length < pageSize) break;
  }
  return n;
}
