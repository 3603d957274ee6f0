/**
 * XLSX worksheets read row by row, in workbook order, from the archive's central directory.
 *
 * Why not ExcelJS's `stream.xlsx.WorkbookReader` as it is: it reads the archive in one streaming pass, and its
 * unzip stream (`unzipper` 0.10) announces its end as soon as the input is consumed, while entries it already parsed
 * may still wait in its buffer. The last entries are then never seen: a workbook whose `xl/workbook.xml` is stored
 * last (ExcelJS's own writer does that) intermittently fails with "Cannot read properties of undefined (reading
 * 'sheets')", and a worksheet stored last can go missing without an error
 * (https://github.com/exceljs/exceljs/issues/3064, open). Here the archive is opened through its central directory
 * (`unzipper.Open`, random access): the workbook's relationships, the workbook, the shared strings and the styles
 * are parsed first, then each worksheet is streamed through ExcelJS's own row reader, so no sheet is ever held whole
 * and nothing depends on the order the entries were stored in. ExcelJS's entry parsers are internal methods of its
 * 4.4.0 release, which the package pins exactly; the XLSX tests fail if they change.
 */
import type { Readable } from 'node:stream';
import type { File as ZipEntry } from 'unzipper';

/** One worksheet: its tab name and its rows (each `values` is 1-based, as ExcelJS gives it). */
export interface XlsxSheet {
  readonly name: string | undefined;
  readonly rows: AsyncIterable<{ readonly values: unknown }>;
}

/** The parts of ExcelJS 4.4.0's WorkbookReader used here (see the module comment). */
interface WorkbookReaderInternals {
  workbookRels?: ReadonlyArray<{ readonly Id: string; readonly Target: string }>;
  model?: { readonly sheets?: ReadonlyArray<{ readonly rId: string }> };
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncIterable<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(iterator: AsyncIterable<unknown>, sheetNo: string): Iterable<{ eventType: string; value: unknown }>;
}

const WORKSHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;

/** The worksheet entries in tab order (the workbook's `<sheets>` through its relationships), then any others by number. */
function sheetOrder(reader: WorkbookReaderInternals, files: readonly ZipEntry[]): Array<{ entry: ZipEntry; sheetNo: string }> {
  const targetOf = new Map((reader.workbookRels ?? []).map((rel) => [rel.Id, rel.Target.replace(/^\/?xl\//, '')]));
  const tab = new Map<string, number>();
  (reader.model?.sheets ?? []).forEach((sheet, i) => {
    const target = targetOf.get(sheet.rId);
    if (target !== undefined && !tab.has(target)) tab.set(target, i);
  });
  return files
    .map((entry) => {
      const sheetNo = WORKSHEET.exec(entry.path)?.[1];
      return sheetNo === undefined ? undefined : { entry, sheetNo, n: Number(sheetNo), tab: tab.get(`worksheets/sheet${sheetNo}.xml`) ?? Number.MAX_SAFE_INTEGER };
    })
    .filter((s) => s !== undefined)
    .sort((a, b) => a.tab - b.tab || a.n - b.n);
}

/**
 * The worksheets of the XLSX at `source` (a path, or the bytes), in tab order, each streamed row by row. At most
 * `maxSheets` are yielded; the number of the others is returned. Throws when the archive or the workbook cannot be read.
 */
export async function* readXlsxSheets(source: { path: string } | { bytes: Uint8Array }, maxSheets: number): AsyncGenerator<XlsxSheet, number> {
  // Loaded on first use: most processes never read a workbook.
  const [{ default: ExcelJS }, { Open }] = await Promise.all([import('exceljs') as unknown as Promise<{ default: typeof import('exceljs') }>, import('unzipper')]);
  const directory = 'path' in source ? await Open.file(source.path) : await Open.buffer(Buffer.from(source.bytes.buffer, source.bytes.byteOffset, source.bytes.byteLength));
  const files = directory.files.filter((f) => f.type === 'File');
  const byPath = new Map(files.map((f) => [f.path, f]));
  const entry = (name: string) => byPath.get(name);
  const workbook = entry('xl/workbook.xml');
  if (workbook === undefined) throw new Error('no xl/workbook.xml in the archive');
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(undefined as never, { sharedStrings: 'cache', hyperlinks: 'ignore', styles: 'cache', worksheets: 'emit', entries: 'ignore' }) as unknown as WorkbookReaderInternals;
  const rels = entry('xl/_rels/workbook.xml.rels');
  if (rels !== undefined) await reader._parseRels(rels.stream());
  await reader._parseWorkbook(workbook.stream());
  const sharedStrings = entry('xl/sharedStrings.xml');
  if (sharedStrings !== undefined) for await (const _ of reader._parseSharedStrings(sharedStrings.stream())) void _;
  const styles = entry('xl/styles.xml');
  if (styles !== undefined) await reader._parseStyles(styles.stream());
  const sheets = sheetOrder(reader, files);
  for (const { entry: sheet, sheetNo } of sheets.slice(0, maxSheets)) {
    for (const { eventType, value } of reader._parseWorksheet(sheet.stream(), sheetNo)) {
      if (eventType !== 'worksheet') continue;
      const ws = value as AsyncIterable<{ values: unknown }> & { name?: string };
      yield { name: ws.name, rows: ws };
    }
  }
  return Math.max(0, sheets.length - maxSheets);
}
