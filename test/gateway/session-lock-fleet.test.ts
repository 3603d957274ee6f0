/**
 * Two turns on one session sent to two gateway processes of a fleet (issue 34, part 8): the second is refused
 * (409) while the first runs, on SQLite and on a real PostgreSQL server; once the first has ended, the other
 * process takes the session. Real processes; the first turn is held open by its model until the test lets it go.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres, type RealPostgres } from '../postgres/support';
import { realComponent } from '../support/real-component';
import { chatBody } from './helpers';

const ROOT = path.join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'minara-lock-'));
const children: ChildProcess[] = [];
let own: Promise<RealPostgres> | undefined;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (own) (await own).stop();
});

function gateway(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'lock-gateway.ts'), ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (prefix: string) => {
    for (;;) {
      const n = await lines.next();
      if (n.done) throw new Error(`process ended before printing "${prefix}"`);
      if (n.value.startsWith(prefix)) return n.value.slice(prefix.length).trim();
    }
  };
  return { next, send: (line: string) => child.stdin!.write(`${line}\n`) };
}

const post = (base: string, body: unknown) =>
  fetch(`${base}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-minara-user': 'alice', 'x-minara-scopes': 'approvals:decide' }, body: JSON.stringify(body) });

const pgAvailable = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH');
const engines: Array<[string, () => Promise<string[]>, boolean]> = [
  ['SQLite', async () => ['sqlite', path.join(mkdtempSync(path.join(dir, 'db-')), 'minara.db')], true],
  ['PostgreSQL', async () => ['postgres', realServerUrl() ?? (await (own ??= startRealPostgres())).url, freshSchema('lock')], pgAvailable],
];

for (const [name, database, available] of engines) {
  describe.runIf(available)(`one turn per session across gateway processes (${name})`, () => {
    it('a second turn on the session, sent to the other process while the first runs, is refused; afterwards it runs', async () => {
      const db = await database();
      const a = gateway(db);
      const urlA = await a.next('url ');
      const b = gateway(db);
      const urlB = await b.next('url ');
      // A's turn starts and waits in its model call: it holds the session.
      const first = post(urlA, chatBody('shared-1', 'first question'));
      await a.next('waiting');
      const second = await post(urlB, chatBody('shared-1', 'second question'));
      expect(second.status).toBe(409);
      expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(/already running in chat "shared-1" \(on this or another gateway instance\)/);
      // Another session on B is not affected.
      const other = post(urlB, chatBody('shared-2', 'elsewhere'));
      await b.next('waiting');
      b.send('go');
      expect(await (await other).text()).toContain('[DONE]');
      // A finishes; then B takes the session.
      a.send('go');
      const firstText = await (await first).text();
      expect(firstText).toContain('Answered.');
      const third = post(urlB, chatBody('shared-1', 'third question'));
      await b.next('waiting');
      b.send('go');
      const thirdResponse = await third;
      expect(thirdResponse.status).toBe(200);
      expect(await thirdResponse.text()).toContain('Answered.');
      a.send('quit');
      b.send('quit');
    }, 120_000);
  });
}
