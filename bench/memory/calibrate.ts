/**
 * Host calibration for the memory benchmarks: two fixed workloads, independent of this library's code, timed
 * in the same process as the bench so its figures can be compared across hosts (the reference machines' speed
 * has varied by up to ~2× between sessions for the same code).
 *
 * - `fts5`: a seeded 20k-row FTS5 table (unicode61, the bench corpus's words) in an in-memory database; 40
 *   fixed queries, each the newest 1,000 matching rowids of an AND pair (the shape of the memory window), plus
 *   a `COUNT(*)` of one common word. Median of 5 passes, ms per pass.
 * - `js`: a fixed string-scanning loop (tokenising and counting the same corpus's rows). Median of 5 passes.
 *
 * Both depend only on the SQLite build and the CPU, so a host that runs them 1.5× slower runs the bench's
 * search figures roughly that much slower too.
 */
import Database from 'better-sqlite3';
import { generateMemories } from './corpus';

export interface HostCalibration {
  /** Median ms of one pass of the fixed FTS5 workload. */
  readonly fts5Ms: number;
  /** Median ms of one pass of the fixed JavaScript workload. */
  readonly jsMs: number;
}

const WORDS = ['funding', 'market', 'unlock', 'hedge', 'spread', 'volume', 'rotation', 'yield', 'entry', 'exit'];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Run both workloads (≈1–2 s in all). */
export function calibrateHost(): HostCalibration {
  const rows = generateMemories(20_000, 1234).map((r) => r.content.toLowerCase());
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61')");
  const insert = db.prepare('INSERT INTO t(rowid, body) VALUES (?, ?)');
  db.transaction(() => rows.forEach((body, i) => insert.run(i + 1, body)))();
  const window = db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid DESC LIMIT 1000').pluck();
  const count = db.prepare('SELECT COUNT(*) FROM t WHERE t MATCH ?').pluck();
  const pairs = Array.from({ length: 40 }, (_, i) => `"${WORDS[i % WORDS.length]}" AND "${WORDS[(i * 7 + 3) % WORDS.length]}"`);
  const fts5: number[] = [];
  for (let pass = 0; pass < 6; pass++) {
    const t = performance.now();
    for (const q of pairs) window.all(q);
    count.get('"funding"');
    if (pass > 0) fts5.push(performance.now() - t);
  }
  db.close();
  const js: number[] = [];
  for (let pass = 0; pass < 6; pass++) {
    const t = performance.now();
    const df = new Map<string, number>();
    for (const row of rows) for (const token of new Set(row.split(/[^a-z0-9]+/u))) df.set(token, (df.get(token) ?? 0) + 1);
    let hits = 0;
    for (const row of rows) for (const w of WORDS) if (row.includes(w)) hits++;
    if (hits + df.size < 0) throw new Error('unreachable'); // keeps the results live
    if (pass > 0) js.push(performance.now() - t);
  }
  return { fts5Ms: median(fts5), jsMs: median(js) };
}
