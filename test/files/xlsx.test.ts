import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { parseSpreadsheet } from '@minara/agent';
import ExcelJS from 'exceljs';
import unzipper from 'unzipper';
import { afterAll, describe, expect, it } from 'vitest';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A workbook written by ExcelJS: it stores xl/workbook.xml last in the archive. */
async function workbookBytes(sheetNames: readonly string[] = ['Trades', 'Notes']): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  for (const [i, name] of sheetNames.entries()) {
    const ws = wb.addWorksheet(name);
    ws.addRow(['asset', 'qty']);
    for (let r = 0; r < 3 + i; r++) ws.addRow([`${name}-${r}`, r]);
  }
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** The archive's entries (files only), in stored order. */
async function entriesOf(bytes: Buffer): Promise<Array<[string, Buffer]>> {
  const dir = (await unzipper.Open.buffer(bytes)) as { files: Array<{ path: string; type: string; buffer(): Promise<Buffer> }> };
  const out: Array<[string, Buffer]> = [];
  for (const f of dir.files) if (f.type === 'File') out.push([f.path, await f.buffer()]);
  return out;
}

/** A ZIP of `entries` in exactly this order, stored (no compression): local headers, data, the central directory. */
function zipStored(entries: ReadonlyArray<readonly [string, Buffer]>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const nameBytes = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    locals.push(local, nameBytes, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const names = async (bytes: Uint8Array, maxSheets?: number) =>
  (await parseSpreadsheet({ bytes, mediaType: XLSX, filename: 'b.xlsx', ...(maxSheets !== undefined ? { maxSheets } : {}) })).sheets.map((s) => `${s.name}:${s.rows}`);

describe('XLSX workbooks whatever order their entries are stored in', () => {
  it('a workbook ExcelJS wrote (its workbook.xml stored last) reads whole every time (exceljs#3064 lost it now and then)', async () => {
    const bytes = await workbookBytes();
    const stored = (await entriesOf(bytes)).map(([n]) => n);
    expect(stored.at(-1)).toBe('xl/workbook.xml');
    for (let i = 0; i < 100; i++) expect(await names(bytes)).toEqual(['b.xlsx / Trades:3', 'b.xlsx / Notes:4']);
  });

  it('a worksheet stored last, the workbook stored first, the shared strings first: the same sheets and rows', async () => {
    const entries = await entriesOf(await workbookBytes(['Trades', 'Notes', 'Risk']));
    const last = (name: string) => [...entries.filter(([n]) => n !== name), entries.find(([n]) => n === name)!];
    const first = (name: string) => [entries.find(([n]) => n === name)!, ...entries.filter(([n]) => n !== name)];
    const layouts = [last('xl/worksheets/sheet3.xml'), last('xl/worksheets/sheet1.xml'), first('xl/workbook.xml'), first('xl/sharedStrings.xml'), [...entries].reverse()];
    for (const layout of layouts) {
      const bytes = zipStored(layout);
      for (let i = 0; i < 20; i++) expect(await names(bytes)).toEqual(['b.xlsx / Trades:3', 'b.xlsx / Notes:4', 'b.xlsx / Risk:5']);
    }
  });

  it('sheets come in tab order (the workbook’s list), not by file number; the sheet cap counts the rest', async () => {
    const entries = await entriesOf(await workbookBytes(['Trades', 'Notes', 'Risk']));
    const reordered = entries.map(([n, data]): [string, Buffer] => {
      if (n !== 'xl/workbook.xml') return [n, data];
      const xml = data.toString('utf8');
      const tags = xml.match(/<sheet [^>]*\/>/g)!;
      expect(tags).toHaveLength(3);
      return [n, Buffer.from(xml.replace(tags.join(''), [tags[2], tags[0], tags[1]].join('')))];
    });
    const bytes = zipStored(reordered);
    expect(await names(bytes)).toEqual(['b.xlsx / Risk:5', 'b.xlsx / Trades:3', 'b.xlsx / Notes:4']);
    const capped = await parseSpreadsheet({ bytes, mediaType: XLSX, filename: 'b.xlsx', maxSheets: 2 });
    expect(capped.sheets.map((s) => s.name)).toEqual(['b.xlsx / Risk', 'b.xlsx / Trades']);
    expect(capped.truncated).toBe(true);
    expect(capped.text).toContain('[Truncated: 1 more sheets not read (sheet cap 2).]');
  });

  it('reads from a path the same as from bytes; an archive without a workbook is FILE_UNREADABLE naming it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-xlsx-'));
    dirs.push(dir);
    const file = path.join(dir, 'b.xlsx');
    writeFileSync(file, await workbookBytes());
    const parsed = await parseSpreadsheet({ path: file, mediaType: XLSX, filename: 'b.xlsx' });
    expect(parsed.sheets.map((s) => s.name)).toEqual(['b.xlsx / Trades', 'b.xlsx / Notes']);
    expect(parsed.text).toContain('| Notes-3 | 3 |');
    const noWorkbook = zipStored((await entriesOf(await workbookBytes())).filter(([n]) => n !== 'xl/workbook.xml'));
    await expect(parseSpreadsheet({ bytes: noWorkbook, mediaType: XLSX, filename: 'c.xlsx' })).rejects.toMatchObject({
      code: 'FILE_UNREADABLE',
      message: expect.stringContaining('c.xlsx: not a readable XLSX workbook (no xl/workbook.xml in the archive)'),
    });
  });
});
