import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createFileStore, createMessageTranslator, MinaraError, parseSpreadsheet, sniffContentType } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';

/** V8's collector, exposed at run time (`--expose-gc` set from inside the test process). */
function gcForTests(): (options: { type: 'minor' | 'major' }) => void {
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as (options: { type: 'minor' | 'major' }) => void;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-files-'));
  dirs.push(d);
  return d;
};
const code = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return MinaraError.isInstance(e) ? `${e.code}: ${e.message}` : String(e);
  }
  return 'no error';
};

describe('fileStore.put', () => {
  it('refuses empty and oversized files naming the limit; keeps bytes under its dir; scoped reads; delete removes both', async () => {
    const dir = temp();
    const storage = createInMemoryStorage();
    const files = createFileStore({ dir, storage, maxBytes: 100 });
    expect(await code(files.put({ userId: 'u1', bytes: new Uint8Array(0), filename: 'a.csv' }))).toMatch(/^FILE_EMPTY: .*"a\.csv" is empty/);
    expect(await code(files.put({ userId: 'u1', bytes: new Uint8Array(101) }))).toBe('FILE_TOO_LARGE: fileStore.put: the file is 101 bytes; the limit is 100 bytes.');
    const f = await files.put({ userId: 'u1', bytes: new TextEncoder().encode('{"a":1}'), filename: '../../etc/passwd', contentType: 'application/json' });
    expect(f).toMatchObject({ mediaType: 'application/json', filename: 'passwd', sizeBytes: 7 });
    const p = (await files.pathOf({ userId: 'u1' }, f.key))!;
    expect(path.relative(dir, p).startsWith('..')).toBe(false);
    expect(await files.read({ userId: 'u2' }, f.key)).toBeUndefined();
    expect(await files.stat({ userId: 'u1' }, '../x')).toBeUndefined();
    expect(new TextDecoder().decode((await files.read({ userId: 'u1' }, f.key))!.bytes)).toBe('{"a":1}');
    expect(await files.delete({ userId: 'u2' }, f.key)).toBe(false);
    expect(await files.delete({ userId: 'u1' }, f.key)).toBe(true);
    expect(await files.stat({ userId: 'u1' }, f.key)).toBeUndefined();
  });

  it('sniffs by content: a PDF declared as an image is a PDF; binary junk is octet-stream; SVG is never served as SVG', async () => {
    expect((await sniffContentType(new TextEncoder().encode('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n'), { declared: 'image/png' })).mediaType).toBe('application/pdf');
    expect((await sniffContentType(new Uint8Array([0, 1, 2, 3, 250, 251]), { declared: 'text/csv' })).mediaType).toBe('application/octet-stream');
    expect((await sniffContentType(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), { declared: 'image/svg+xml' })).mediaType).toBe('text/plain');
    expect((await sniffContentType(new TextEncoder().encode('a,b\n1,2\n'), { filename: 'x.csv' })).mediaType).toBe('text/csv');
  });
});

describe('parseSpreadsheet', () => {
  it('streams a 1M-row CSV: the first rows as a table, the rest counted, a truncation note; memory stays flat', async () => {
    const file = path.join(temp(), 'big.csv');
    const out = createWriteStream(file);
    out.write('id,symbol,price\n');
    let chunk = '';
    for (let i = 1; i <= 1_000_000; i++) {
      chunk += `${i},BTC,${97000 + (i % 100)}\n`;
      if (i % 50_000 === 0) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    out.end();
    await once(out, 'finish');
    // What the parser holds, not the garbage it makes: a minor collection before each sample (every 2 ms while the
    // parse runs; the file stream yields between chunks) leaves the live heap. Measured: a streaming parse peaks
    // ~1 MB above the start; reading the file whole would hold ~17 MB, splitting it into rows ~200 MB.
    const gc = gcForTests();
    gc({ type: 'major' });
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sample = () => {
      gc({ type: 'minor' });
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    };
    const sampler = setInterval(sample, 2);
    const parsed = await parseSpreadsheet({ path: file, mediaType: 'text/csv', filename: 'big.csv', maxRows: 50 }).finally(() => clearInterval(sampler));
    sample();
    const grew = peak - before;
    expect(parsed.sheets).toEqual([{ name: 'big.csv', rows: 1_000_000, columns: 3, truncated: true }]);
    expect(parsed.truncated).toBe(true);
    expect(parsed.text).toContain('| id | symbol | price |');
    expect(parsed.text).toContain('| 50 | BTC | 97050 |');
    expect(parsed.text).not.toContain('| 51 | BTC |');
    expect(parsed.text).toContain('[Truncated: 999,950 more rows not shown (row cap 50).');
    // The file is ~22 MB; the parser kept 51 rows. The bound is far below the file's size (a parser holding it fails).
    expect(grew).toBeLessThan(8 * 1024 * 1024);
  }, 60_000);

  it('reads a small CSV whole, with quoted newlines and pipes escaped', async () => {
    const parsed = await parseSpreadsheet({ bytes: new TextEncoder().encode('name,note\n"a","x|y"\n"b","line1\nline2"\n'), mediaType: 'text/csv' });
    expect(parsed.truncated).toBe(false);
    expect(parsed.sheets[0]).toMatchObject({ rows: 2, columns: 2 });
    expect(parsed.text).toContain('| a | x\\|y |');
    expect(parsed.text).toContain('| b | line1 line2 |');
  });

  it('reads an XLSX workbook (every sheet) and refuses a malformed one with FILE_UNREADABLE', async () => {
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.Workbook();
    const s1 = wb.addWorksheet('Trades');
    s1.addRow(['date', 'asset', 'pnl']);
    for (let i = 0; i < 30; i++) s1.addRow([new Date(Date.UTC(2026, 0, 1 + i)), 'ETH', i - 10]);
    wb.addWorksheet('Notes').addRow(['hello | world']);
    const bytes = new Uint8Array(await wb.xlsx.writeBuffer());
    const sniffed = await sniffContentType(bytes, { declared: 'application/octet-stream' });
    expect(sniffed.mediaType).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const parsed = await parseSpreadsheet({ bytes, mediaType: sniffed.mediaType, filename: 'book.xlsx', maxRows: 10 });
    expect(parsed.sheets).toEqual([{ name: 'book.xlsx / Trades', rows: 30, columns: 3, truncated: true }, { name: 'book.xlsx / Notes', rows: 0, columns: 1, truncated: false }]);
    expect(parsed.text).toContain('| 2026-01-01T00:00:00.000Z | ETH | -10 |');
    expect(parsed.text).toContain('[Truncated: 20 more rows');
    const broken = path.join(temp(), 'broken.xlsx');
    writeFileSync(broken, Buffer.concat([Buffer.from(bytes.subarray(0, 200)), Buffer.alloc(100, 7)]));
    expect(await code(parseSpreadsheet({ path: broken, mediaType: sniffed.mediaType, filename: 'broken.xlsx' }))).toMatch(/^FILE_UNREADABLE: broken\.xlsx: not a readable XLSX workbook/);
    expect(await code(parseSpreadsheet({ bytes: new TextEncoder().encode('not a zip'), mediaType: sniffed.mediaType }))).toMatch(/^FILE_UNREADABLE/);
  });
});

describe('message translator', () => {
  it('stores keys, gives the model parts; an unreadable spreadsheet becomes a note the model can read', async () => {
    const storage = createInMemoryStorage();
    const files = createFileStore({ dir: temp(), storage });
    const t = createMessageTranslator({ files });
    const bad = await files.put({ userId: 'u1', bytes: new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]), filename: 'x.xlsx' });
    const stored = await t.toStoredUserMessage({ text: 'see', attachments: [bad.key], userId: 'u1' });
    expect(JSON.stringify(stored)).toContain(`minara-file:${bad.key}`);
    await expect(t.toStoredUserMessage({ text: 'see', attachments: [bad.key], userId: 'u2' })).rejects.toThrow(/attachments\[0\]: no file/);
    const [m] = await t.toModelMessages([stored], { userId: 'u1' });
    expect(JSON.stringify(m)).not.toContain('minara-file:');
  });
});
