import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { MinaraError } from '../errors/minara-error';
import { readXlsxSheets } from './xlsx-sheets';

/** Content types the parser reads. */
export const SPREADSHEET_TYPES: readonly string[] = ['text/csv', 'text/tab-separated-values', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'];

/** Options of {@link parseSpreadsheet}. */
export interface ParseSpreadsheetOptions {
  /** The file on disk (streamed), or its bytes. */
  readonly path?: string | undefined;
  readonly bytes?: Uint8Array | undefined;
  /** `text/csv`, `text/tab-separated-values` or the XLSX type. */
  readonly mediaType: string;
  /** Shown in the heading. */
  readonly filename?: string | undefined;
  /** Rows shown per sheet (after the header); the rest are counted, not kept. @default 200 */
  readonly maxRows?: number | undefined;
  /** Longest cell shown. @default 200 */
  readonly maxCellChars?: number | undefined;
  /** Most sheets of a workbook read. @default 10 */
  readonly maxSheets?: number | undefined;
}

/** One sheet as read. */
export interface ParsedSheet {
  readonly name: string;
  /** Data rows (the header not counted). For a truncated CSV, counted by line breaks after the cap. */
  readonly rows: number;
  readonly columns: number;
  readonly truncated: boolean;
}

/** A spreadsheet as structured text for the model. */
export interface ParsedSpreadsheet {
  /** Markdown tables with a heading per sheet and a note where rows were cut. */
  readonly text: string;
  readonly sheets: readonly ParsedSheet[];
  readonly truncated: boolean;
}

const cell = (v: unknown, max: number): string => {
  let s = v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : typeof v === 'object' ? cellObject(v as Record<string, unknown>) : String(v);
  s = s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  return s.length > max ? `${s.slice(0, max)}…` : s;
};
function cellObject(v: Record<string, unknown>): string {
  if ('result' in v) return String(v.result ?? '');
  if ('text' in v) return String(v.text ?? '');
  if (Array.isArray(v.richText)) return (v.richText as Array<{ text?: string }>).map((t) => t.text ?? '').join('');
  if ('error' in v) return String(v.error);
  return JSON.stringify(v);
}

function table(name: string, rows: readonly unknown[][], total: number, maxRows: number, maxCell: number): { text: string; sheet: ParsedSheet } {
  const [header = [], ...data] = rows;
  const columns = Math.max(header.length, ...data.map((r) => r.length), 0);
  const pad = (r: readonly unknown[]) => Array.from({ length: columns }, (_, i) => cell(r[i], maxCell));
  const truncated = total > data.length;
  const lines = [
    `### ${name}: ${total.toLocaleString('en-US')} data rows × ${columns} columns${truncated ? `; the first ${data.length.toLocaleString('en-US')} are shown` : ''}`,
    columns > 0 ? `| ${pad(header).join(' | ')} |` : '(empty)',
    ...(columns > 0 ? [`|${' --- |'.repeat(columns)}`] : []),
    ...data.map((r) => `| ${pad(r).join(' | ')} |`),
  ];
  if (truncated) lines.push(`[Truncated: ${(total - data.length).toLocaleString('en-US')} more rows not shown (row cap ${maxRows}). Ask the user for a filtered or aggregated extract if you need them.]`);
  return { text: lines.join('\n'), sheet: { name, rows: total, columns, truncated } };
}

async function readCsv(source: AsyncIterable<Buffer | Uint8Array>, delimiter: string, maxRows: number): Promise<{ rows: unknown[][]; total: number }> {
  const rows: unknown[][] = [];
  const { parse } = await import('csv-parse'); // loads on the first CSV, not with the package
  const parser = parse({ delimiter, bom: true, relax_column_count: true, skip_empty_lines: true, relax_quotes: true });
  parser.on('readable', () => {
    let r: unknown[] | null;
    while ((r = parser.read() as unknown[] | null) !== null) if (rows.length <= maxRows) rows.push(r);
  });
  let failure: unknown;
  parser.on('error', (e) => {
    failure = e;
  });
  // Line breaks of the whole file are counted; past the cap that count (not the parser) gives the row total.
  let capped = false;
  let lines = 0;
  let lastByte = 10;
  for await (const chunk of source) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    lastByte = buf[buf.length - 1] ?? lastByte;
    for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
    if (capped) continue;
    parser.write(buf);
    // Let the parser hand over what it has, then check the cap.
    await new Promise((r) => setImmediate(r));
    if (failure) throw failure;
    if (rows.length > maxRows) {
      capped = true;
      parser.destroy();
    }
  }
  if (!capped) {
    await new Promise<void>((resolve, reject) => {
      parser.once('end', resolve);
      parser.once('error', reject);
      parser.end();
    });
    if (failure) throw failure;
    return { rows, total: Math.max(0, rows.length - 1) };
  }
  // Lines of the file minus the header (a last line without a line break counts too). Quoted line breaks
  // inside cells past the cap would be counted as rows: the total of a truncated file is approximate then.
  return { rows, total: lines + (lastByte !== 10 ? 1 : 0) - 1 };
}

/**
 * Turn a CSV or XLSX upload into structured text the model can read: a markdown table per sheet with at most
 * `maxRows` rows and a note saying how many were cut. A CSV is streamed: past the cap only line breaks are
 * counted, so a million-row file needs no more memory than its first rows. An XLSX is read with `exceljs`'s
 * streaming reader. A file that is not what it claims is `FILE_UNREADABLE`.
 *
 * @example
 * ```ts
 * const { text, truncated } = await parseSpreadsheet({ path: 'q1.csv', mediaType: 'text/csv', maxRows: 100 });
 * ```
 */
export async function parseSpreadsheet(options: ParseSpreadsheetOptions): Promise<ParsedSpreadsheet> {
  const { mediaType, filename, maxRows = 200, maxCellChars = 200, maxSheets = 10 } = options;
  if (!SPREADSHEET_TYPES.includes(mediaType)) throw new MinaraError('INVALID_ARGUMENT', `parseSpreadsheet: mediaType must be one of ${SPREADSHEET_TYPES.join(', ')}, got ${JSON.stringify(mediaType)}.`);
  if (!Number.isSafeInteger(maxRows) || maxRows < 1) throw new MinaraError('INVALID_ARGUMENT', `parseSpreadsheet: maxRows must be a positive integer, got ${String(maxRows)}.`);
  if (options.path === undefined && !(options.bytes instanceof Uint8Array)) throw new MinaraError('INVALID_ARGUMENT', 'parseSpreadsheet: give "path" or "bytes".');
  const name = filename ?? (mediaType.includes('sheet') ? 'workbook' : 'table');
  const open = () => (options.path !== undefined ? createReadStream(options.path, { highWaterMark: 256 * 1024 }) : Readable.from([Buffer.from(options.bytes!)]));

  if (mediaType !== SPREADSHEET_TYPES[2]) {
    let read;
    try {
      read = await readCsv(open(), mediaType === 'text/tab-separated-values' ? '\t' : ',', maxRows);
    } catch (error) {
      throw new MinaraError('FILE_UNREADABLE', `${name}: not readable as CSV: ${error instanceof Error ? error.message : String(error)}`);
    }
    const t = table(name, read.rows, read.total, maxRows, maxCellChars);
    return { text: t.text, sheets: [t.sheet], truncated: t.sheet.truncated };
  }

  const parts: string[] = [];
  const sheets: ParsedSheet[] = [];
  let skippedSheets = 0;
  try {
    const workbook = readXlsxSheets(options.path !== undefined ? { path: options.path } : { bytes: options.bytes! }, maxSheets);
    for (;;) {
      const next = await workbook.next();
      if (next.done === true) {
        skippedSheets = next.value;
        break;
      }
      const ws = next.value;
      const rows: unknown[][] = [];
      let total = 0;
      for await (const row of ws.rows) {
        const values = (row.values as unknown[]).slice(1);
        if (rows.length <= maxRows) rows.push(values);
        total++;
      }
      const t = table(`${name} / ${ws.name ?? `Sheet${sheets.length + 1}`}`, rows, Math.max(0, total - 1), maxRows, maxCellChars);
      parts.push(t.text);
      sheets.push(t.sheet);
    }
  } catch (error) {
    throw new MinaraError('FILE_UNREADABLE', `${name}: not a readable XLSX workbook (${error instanceof Error ? error.message : String(error)}).`);
  }
  if (sheets.length === 0) throw new MinaraError('FILE_UNREADABLE', `${name}: not a readable XLSX workbook (no worksheet found).`);
  if (skippedSheets > 0) parts.push(`[Truncated: ${skippedSheets} more sheets not read (sheet cap ${maxSheets}).]`);
  return { text: parts.join('\n\n'), sheets, truncated: skippedSheets > 0 || sheets.some((s) => s.truncated) };
}
