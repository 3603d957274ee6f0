/**
 * The pool `createPostgresStorage({ connectionString })` builds turns JIT off on each new connection. Its first
 * version sent that `SET` from the pool's `connect` event without waiting, so the statement the connection was
 * checked out for ran while the `SET` was still executing: node-postgres (8.23 here) warns about it ("Calling
 * client.query() when the client is already executing a query"), and pg@9 removes the queueing it relied on.
 * Each new connection must finish its `SET` before its first statement. One file of its own: Node prints a
 * deprecation once per process, so an earlier file's warning would hide this one's.
 */
import { describe, expect, it } from 'vitest';
import { createPostgresStorage } from '@minara/agent/postgres';
import { silentLogger } from '@minara/agent';
import { realComponent } from '../support/real-component';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH (Debian: apt-get install postgresql)');

describe.runIf(available)('the pool createPostgresStorage builds', () => {
  it('runs no statement on a connection while its JIT-off SET is still running, and every connection has JIT off', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const own = realServerUrl() === undefined ? await startRealPostgres() : undefined;
    const storage = await createPostgresStorage({ connectionString: own?.url ?? realServerUrl()!, schema: freshSchema('dep'), logger: silentLogger, poolSize: 6 });
    try {
      // Six statements at once on an idle pool: each needs a connection of its own, opened now.
      for (let round = 0; round < 3; round++) {
        await Promise.all(Array.from({ length: 6 }, (_, i) => storage.conversations.ensureSession({ id: `s-${round}-${i}`, now: new Date().toISOString() })));
      }
      // Six transactions held open together: six different connections, each asked for its setting.
      const jit = await Promise.all(Array.from({ length: 6 }, () => storage.transaction('jit', async (tx) => (await tx.get<{ jit: string }>("SELECT current_setting('jit') AS jit, pg_sleep(0.05)"))?.jit)));
      expect(jit).toEqual(Array(6).fill('off'));
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => /client\.query\(\)|already executing a query/.test(w))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await storage.close();
      own?.stop();
    }
  }, 60_000);
});
