import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLearningStore, silentLogger, type Storage } from '@minara/agent';
import { createPostgresStorage, type PostgresStorage } from '@minara/agent/postgres';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { freshSchema, realServerUrl, sharedPglitePool } from '../postgres/support';
import { paperFill, turnRecord } from './support';

// Learning migration v4 widens `methodologies.state` to allow `proposed`. On SQLite that is a table rebuild under
// foreign keys (the drop would cascade to `methodology_outcomes`), so the test writes a database the way v3 left it,
// with attributions and a deleted highest id, and checks that nothing is lost and no id is reused.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Two methodologies with one attributed round trip each, and a third (the highest id) deleted. */
async function writeV3Data(storage: Storage) {
  const learning = createLearningStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
  const a = (await learning.createMethodology({ asset: 'ETH', text: 'Buy ETH on a retest of the breakout level.' })).methodology;
  const b = (await learning.createMethodology({ asset: 'BTC', text: 'Trim BTC after a 10% week.' })).methodology;
  const c = (await learning.createMethodology({ asset: 'SOL', text: 'A rule that will be deleted.' })).methodology;
  for (const [asset, id] of [['ETH', a.id], ['BTC', b.id]] as const) {
    await learning.captureTurn(turnRecord([paperFill(asset, 'buy', 100, 0)], { methodologyIds: [id] }));
    await learning.captureTurn(turnRecord([paperFill(asset, 'sell', 110, 10)]));
  }
  await learning.quarantineMethodology(b.id, 'weak');
  return { a, b, c };
}

const OLD_CHECK = "CHECK (state IN ('candidate', 'graduated', 'quarantined'))";

describe('learning migration v4: methodologies may be proposed', () => {
  it('SQLite: a v3 database keeps its rows, attributions and id high-water mark, and takes proposed rows', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-proposed-migration-'));
    dirs.push(dir);
    const file = path.join(dir, 'minara.db');
    const first = createSqliteStorage({ path: file, logger: silentLogger });
    const { a, b, c } = await writeV3Data(first);
    await first.close();

    // Put the table back as v3 created it (the old CHECK), with foreign keys off so the attributions stay.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    db.pragma('foreign_keys = OFF');
    db.exec('DELETE FROM methodologies WHERE id = ' + String(c.id));
    const create = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'methodologies'").get() as { sql: string }).sql;
    expect(create).toContain("'proposed'");
    db.exec(`
      CREATE TABLE methodologies_old AS SELECT * FROM methodologies;
      DROP TABLE methodologies;
      ${create.replace("CHECK (state IN ('proposed', 'candidate', 'graduated', 'quarantined'))", OLD_CHECK)};
      INSERT INTO methodologies SELECT * FROM methodologies_old;
      DROP TABLE methodologies_old;
      CREATE INDEX methodologies_state ON methodologies (user_id, agent_id, state, asset_class, confidence DESC);
      DELETE FROM schema_migrations WHERE domain = 'learning' AND version = 4;
    `);
    db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'methodologies'").run(c.id);
    expect(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'methodologies'").all()).toEqual([{ seq: c.id }]);
    expect(() => db.prepare("UPDATE methodologies SET state = 'proposed' WHERE id = ?").run(a.id)).toThrow(/CHECK constraint failed/);
    const outcomesBefore = db.prepare('SELECT * FROM methodology_outcomes ORDER BY methodology_id, trade_id').all();
    expect(outcomesBefore).toHaveLength(2);
    db.close();

    const storage = createSqliteStorage({ path: file, logger: silentLogger });
    try {
      expect((await storage.schemaVersions()).learning).toBe(4);
      const learning = createLearningStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
      expect(await learning.getMethodology(a.id)).toMatchObject({ state: 'candidate', uses: 1, wins: 1 });
      expect(await learning.getMethodology(b.id)).toMatchObject({ state: 'quarantined', uses: 1, stateReason: 'weak' });
      const p = (await learning.createMethodology({ asset: 'ETH', text: 'Scale into ETH over three days.', state: 'proposed' })).methodology;
      expect(p.state).toBe('proposed');
      expect(p.id).toBeGreaterThan(c.id); // the deleted id is never handed out again
      expect((await learning.acceptMethodology(p.id)).state).toBe('candidate');
    } finally {
      await storage.close();
    }
    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT * FROM methodology_outcomes ORDER BY methodology_id, trade_id').all()).toEqual(outcomesBefore);
    expect(after.pragma('foreign_key_check')).toEqual([]);
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'methodologies' AND name = 'methodologies_state'").get()).toBeDefined();
    expect(after.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'methodolog%v4'").all()).toEqual([]);
    after.close();
  });

  const pg: Array<[string, (schema: string) => Promise<PostgresStorage>]> = [
    ['PGlite', async (schema) => createPostgresStorage({ pool: await sharedPglitePool(), schema, logger: silentLogger })],
    ...(realServerUrl() === undefined ? [] : [['real server', (schema: string) => createPostgresStorage({ connectionString: realServerUrl()!, schema, logger: silentLogger, poolSize: 2 })] as [string, (schema: string) => Promise<PostgresStorage>]]),
  ];
  it.each(pg)('PostgreSQL (%s): a v3 schema takes proposed rows after the migration, rows and attributions kept', async (_name, open) => {
    const schema = freshSchema('p');
    const first = await open(schema);
    const { a, b } = await writeV3Data(first);
    await first.transaction('downgrade', async (tx) => {
      await tx.run(`ALTER TABLE "${schema}".methodologies DROP CONSTRAINT methodologies_state_check`);
      await tx.run(`ALTER TABLE "${schema}".methodologies ADD CONSTRAINT methodologies_state_check ${OLD_CHECK}`);
      await tx.run(`DELETE FROM "${schema}".schema_migrations WHERE domain = 'learning' AND version = 4`);
    });
    const old = createLearningStore({ storage: first, scope: { userId: 'u1' }, logger: silentLogger });
    await expect(old.createMethodology({ asset: 'ETH', text: 'Refused by the old constraint.', state: 'proposed' })).rejects.toThrow();
    await first.close();

    const storage = await open(schema);
    try {
      expect((await storage.schemaVersions()).learning).toBe(4);
      const learning = createLearningStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
      expect(await learning.getMethodology(a.id)).toMatchObject({ state: 'candidate', uses: 1, wins: 1 });
      expect(await learning.getMethodology(b.id)).toMatchObject({ state: 'quarantined', uses: 1 });
      const p = (await learning.createMethodology({ asset: 'ETH', text: 'Scale into ETH over three days.', state: 'proposed' })).methodology;
      expect(p.state).toBe('proposed');
      expect((await learning.listMethodologies({ states: ['proposed'] })).map((m) => m.id)).toEqual([p.id]);
    } finally {
      await storage.close();
    }
  });
});
