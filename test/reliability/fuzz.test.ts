import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, MinaraError, parseEnvelope, parseSkillMd, resolveInSandbox, type MemoryStore } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { startGateway, type Harness, TOKEN } from '../gateway/helpers';

// Property-based fuzzing (fast-check): hostile input never crashes, never answers 5xx, and never throws
// anything but a MinaraError. Case counts are the numRuns below (docs/reliability.md sums them).

const RUNS = { memory: 300, tools: 500, gateway: 300, skillMd: 500, names: 500 } as const;
const expectMinaraOrNothing = (error: unknown) => expect(MinaraError.isInstance(error), String(error)).toBe(true);
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.stringMatching(/^[\s"'*():^~\-+&|!{}\[\]<>\\/.,;%_#@$0-9a-zA-Z]{0,80}$/),
  fc.constantFrom('"', '""', '*', 'NOT', 'AND OR', 'category:', 'NEAR(a b)', '"unterminated', "Caroline's", '\u0000', '\uD800', 'a'.repeat(5000)),
);

describe('fuzz: memory queries', () => {
  const stores: MemoryStore[] = [];
  beforeAll(async () => {
    for (const storage of [createInMemoryStorage(), createSqliteStorage({ path: path.join(mkdtempSync(path.join(tmpdir(), 'minara-fuzz-')), 'f.db') })]) {
      const store = createMemoryStore({ storage, scope: { userId: 'fuzz' } });
      for (const content of ['I love pets and research', 'ETH staking at 4%', '"Xenoblade Chronicles" is a game', '比特币 价格']) await store.write({ category: 'fact', content, source: 'user_stated' } as never);
      stores.push(store);
    }
  });
  afterAll(async () => { for (const s of stores) await s.close(); });

  it(`${RUNS.memory} hostile queries × 2 engines: results or a MinaraError, never a crash`, async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (q) => {
        for (const store of stores) {
          try {
            expect(Array.isArray(await store.search(q, { limit: 5 }))).toBe(true);
          } catch (error) {
            expectMinaraOrNothing(error);
          }
        }
      }),
      { numRuns: RUNS.memory },
    );
  });
});

describe('fuzz: gateway bodies, headers and workspace names', () => {
  let h: Harness;
  beforeAll(async () => { h = await startGateway([], { gateway: { authToken: TOKEN } }); });
  afterAll(async () => h?.close());
  const call = async (p: string, init: RequestInit) => (await h.gateway.fetch(new Request(`http://localhost${p}`, init))).status;

  it(`${RUNS.gateway} hostile bodies and headers: no 5xx`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.json(), hostile, fc.jsonValue().map((v) => JSON.stringify({ id: 'c1', messages: v }))),
        fc.constantFrom('/v1/chat', '/v1/memory', '/v1/approvals/apr_x'),
        fc.stringMatching(/^[\t -~]{0,60}$/),
        async (body, route, headerValue) => {
          const status = await call(route, {
            method: 'POST', body,
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-minara-user': headerValue, 'x-minara-roles': headerValue },
          });
          expect(status).toBeLessThan(500);
        },
      ),
      { numRuns: RUNS.gateway },
    );
  });

  it(`${RUNS.names} hostile workspace file names and sandbox paths: refused cleanly`, async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'minara-fuzz-sb-'));
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostile, fc.webPath(), fc.constantFrom('..', '../x', '%2e%2e%2f', 'SOUL.md', '.env', 'memory/../../x')), async (name) => {
        let encoded: string;
        try {
          encoded = encodeURIComponent(name);
        } catch {
          return; // lone surrogates cannot be sent in a URL at all
        }
        const status = await call(`/v1/workspace/files/${encoded}`, { headers: { authorization: `Bearer ${TOKEN}`, 'x-minara-roles': 'operator' } });
        expect(status).toBeLessThan(500);
        try {
          const resolved = resolveInSandbox(name, { root });
          expect(resolved.startsWith(root)).toBe(true);
        } catch (error) {
          expectMinaraOrNothing(error);
        }
      }),
      { numRuns: RUNS.names },
    );
  });

  it(`${RUNS.tools} arbitrary tool inputs: always an envelope`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('get_price', 'swap_tokens', 'nope'), fc.anything({ maxDepth: 6 }), async (name, input) => {
        const json = await h.tools.dispatch(name, input);
        expect(typeof parseEnvelope(json).ok).toBe('boolean');
      }),
      { numRuns: RUNS.tools },
    );
  });
});

describe('fuzz: SKILL.md front matter', () => {
  it(`${RUNS.skillMd} hostile SKILL.md texts: a skill or issues, never a throw`, () => {
    const frontmatter = fc.oneof(
      hostile,
      fc.dictionary(fc.stringMatching(/^[a-z_.-]{1,12}$/), fc.jsonValue(), { maxKeys: 6 }).map((o) => Object.entries(o).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n')),
      fc.constantFrom('name: x\ndescription: y\nmetadata: {minara: {id: 1}}', 'name: [\n', '&a [*a]', 'name: !!js/function "x"', 'description: ' + 'x'.repeat(10_000)),
    );
    fc.assert(
      fc.property(frontmatter, hostile, (fm, body) => {
        try {
          const r = parseSkillMd(`---\n${fm}\n---\n${body}`, { file: '/tmp/x/SKILL.md', dir: '/tmp/x' });
          expect(r.skill !== undefined || r.issues.length > 0).toBe(true);
        } catch (error) {
          expectMinaraOrNothing(error);
        }
      }),
      { numRuns: RUNS.skillMd },
    );
  });
});
