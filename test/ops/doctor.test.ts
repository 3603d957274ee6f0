/**
 * The doctor on SQLite and in-memory: the health report (plain and anonymous), the fixes as a dry run and
 * applied, idempotency (a second run writes nothing), and every promise of the safety envelope tried.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  bucketCount, createMemoryStore, createLearningStore, DEFAULT_DOCTOR_FIXES, formatDoctorFixReport, formatDoctorReport, runDoctor, runDoctorFixes, silentLogger, type SnapshotDirtyCounters, type Storage,
} from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createFakeEmbedder, createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { postgresEngines } from '../postgres/support';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const engines: ReadonlyArray<{ name: string; make: () => Storage }> = [
  { name: 'sqlite', make: () => {
    const d = mkdtempSync(path.join(tmpdir(), 'minara-doctor-'));
    dirs.push(d);
    return createSqliteStorage({ path: path.join(d, 'minara.db'), logger: silentLogger });
  } },
  { name: 'in-memory', make: () => createInMemoryStorage() },
  ...postgresEngines(),
];

const S = { userId: 'default' };
const NOW = new Date('2026-06-10T12:00:00.000Z');
const at = (daysAgo: number) => new Date(NOW.getTime() - daysAgo * 86_400_000).toISOString();

/** A tenant with something for every section and every fix; returns ids the tests look at. */
async function seed(storage: Storage) {
  const memory = createMemoryStore({ storage, scope: S, now: () => NOW, logger: silentLogger });
  const ids = await memory.writeMany([
    { category: 'preference', content: 'Prefers BTC and ETH over alts', source: 'user_manual' },
    { category: 'lesson', content: 'Size down after two BTC losses in a row', source: 'role_reflection' },
    { category: 'reference', content: 'Cold wallet holds SOL long term' },
    { category: 'reference', content: 'to be removed soon' },
  ]);
  await memory.softDelete(ids[3]!.id);
  await memory.profile.set('risk_tolerance', 'moderate');
  // Edge drift: one row lost its edges (e.g. written by an older extractor).
  await storage.memory.update(S, ids[0]!.id, { edges: [], now: NOW.toISOString() });
  const L = storage.learning;
  const base = { origin: 'api' as const, now: at(30) };
  const graduated = (await L.upsertMethodology(S, { ...base, assetClass: 'crypto_major', text: 'Buy breakouts', normalizedText: 'buy breakouts', restore: { state: 'graduated', uses: 12, wins: 10, confidence: 0.552, graduatedAt: at(20), createdAt: at(30) } })).methodology;
  const proposed = (await L.upsertMethodology(S, { ...base, assetClass: 'crypto_major', text: 'Sell rips', normalizedText: 'sell rips', restore: { state: 'candidate', uses: 10, wins: 9, confidence: 0.596, graduationProposedAt: at(2), createdAt: at(30) } })).methodology;
  // Meets the demotion rule (6/20 → 0.145) but was never quarantined (a policy change, an older version).
  const due = (await L.upsertMethodology(S, { ...base, assetClass: 'crypto_meme', text: 'Chase spikes', normalizedText: 'chase spikes', restore: { state: 'candidate', uses: 20, wins: 6, confidence: 0.145, createdAt: at(30) } })).methodology;
  const hard = (await L.upsertPreference(S, { dimension: 'leverage', kind: 'hard_constraint', text: 'Never above 3x', normalizedText: 'never above 3x', value: '{"maxLeverage":3}', source: 'api', now: at(5) })).preference;
  const behaviour = (await L.upsertPreference(S, { dimension: 'slippage', kind: 'behavioural', text: 'Caps slippage at 0.5%', normalizedText: 'caps slippage at 0.5%', source: 'mined', now: at(5), restore: { state: 'proposed', evidence: 9, contradictions: 0, lastEvidenceAt: at(1), createdAt: at(5) } })).preference;
  const caseBase = { role: 'minara.core', asset: 'BTC', assetClass: 'crypto_major', kind: 'spot' as const, side: 'buy', quantity: 0.01, entryPrice: 60_000, exitPrice: 61_000, notionalUsd: 600, outcome: 'win' as const, realizedPnlUsd: 10, holdingMs: 3_600_000, methodologyIds: [graduated.id], simulated: true, now: NOW.toISOString() };
  const reflected = (await L.importTradeCase(S, { ...caseBase, orderId: 'o-reflected', summary: 'Bought the breakout.', openedAt: at(9), closedAt: at(9), reflectedAt: at(8), classification: 'variance', reflection: '{"lessons":["keep size small"]}' })).case;
  await L.importTradeCase(S, { ...caseBase, orderId: 'o-overdue', summary: 'Old case.', openedAt: at(5), closedAt: at(4) });
  await L.importTradeCase(S, { ...caseBase, orderId: 'o-fresh', summary: 'New case.', openedAt: at(1), closedAt: at(0.5) });
  await storage.audit.append({ at: at(1), toolName: 'get_price', tier: 1, source: 'user', decision: 'allowed', durationMs: 1, argsJson: '{}' });
  await storage.approvals.create({
    id: 'ap1', toolName: 'buy_token', toolCallId: 'c1', inputHash: 'h', inputJson: '{}', tier: 2, status: 'pending', source: 'user', reason: 'fund-moving', createdAt: at(1), expiresAt: at(0.9), signature: 'x',
  });
  await storage.approvals.create({
    id: 'ap2', toolName: 'buy_token', toolCallId: 'c2', inputHash: 'h', inputJson: '{}', tier: 2, status: 'pending', source: 'user', reason: 'fund-moving', createdAt: at(0), expiresAt: new Date(NOW.getTime() + 600_000).toISOString(), signature: 'x',
  });
  return { memory, ids, graduated, proposed, due, hard, behaviour, reflected };
}

/** Everything the safety envelope protects, as comparable data. */
async function fingerprint(storage: Storage) {
  const L = storage.learning;
  return {
    rows: await storage.memory.list(S, { includeDeleted: true, statuses: ['active', 'pending', 'retired'], limit: 1000, order: 'created_asc' }).then((r) => r.map((m) => [m.id, m.deletedAt ?? null, m.status])),
    methodologies: (await L.listMethodologies(S, { limit: 100 })).map((m) => [m.id, m.state]),
    preferences: (await L.listPreferences(S, { limit: 100 })).map((p) => [p.id, p.state]),
    reflections: (await L.listCases(S, { limit: 100 })).map((c) => [c.id, c.reflectedAt ?? null, c.reflection ?? null]),
    audit: (await storage.audit.query({ limit: 1000 })).map((a) => [a.id, a.toolName, a.argsJson]),
    profile: await storage.memory.profileList(S),
  };
}

describe.each(engines)('runDoctor ($name)', ({ make }) => {
  it('reports storage, memory, learning, approvals, audit and model without secrets; anonymous buckets every count', async () => {
    const storage = make();
    const { memory } = await seed(storage);
    await storage.learning.enqueueExtraction(S, { sessionId: 's1', turnId: 'waiting-turn', text: 'I keep 2 ETH on a hardware wallet', now: at(5) });
    const report = await runDoctor({
      storage, memory, now: () => NOW, embedder: false,
      modelStatus: { configured: true, provider: 'openai-compatible', modelId: 'llama3.1', baseUrl: 'https://user:sk-secret-pass@llm.example.com/v1?key=abc', label: 'x' },
    });
    expect(report.storage.engine).toBe(storage.kind);
    if (storage.kind === 'sqlite') expect(report.storage.schemaVersions).toMatchObject({ memory: expect.any(Number), learning: 4 });
    expect(report.memory.byCategory).toEqual([
      { category: 'lesson', active: 1, pending: 0, retired: 0 },
      { category: 'preference', active: 1, pending: 0, retired: 0 },
      { category: 'reference', active: 1, pending: 0, retired: 0 },
    ]);
    expect(report.memory.softDeleted).toBe(1);
    expect(report.memory.embedding).toEqual({ pending: 3, embedded: 0, failed: 0, skipped: 0 });
    expect(report.memory.topEntities.map((e) => e.key)).toContain('BTC');
    expect(report.memory.snapshot).toMatchObject({ profileKeys: 1 });
    expect(report.learning.methodologies).toEqual({ proposed: 0, candidate: 2, graduated: 1, quarantined: 0, graduationProposed: 1 });
    expect(report.learning.demotionDue).toBe(1);
    expect(report.learning.hardConstraints).toEqual({ proposed: 1, active: 0, rejected: 0 });
    expect(report.learning.cases).toEqual({ pending: 2, overdue: 1, reflected: 1 });
    expect(report.audit).toEqual({ rows: 1, chain: { ok: true, checked: 1, problems: 0 } });
    expect(report.learning.extractionQueue).toEqual({ waiting: 1, oldestAt: at(5) });
    expect(report.warnings.join('\n')).toMatch(/1 user turns wait for memory extraction, the oldest for more than 72 h: the pass needs a model and MEMORY_EXTRACTION on/);
    expect(report.approvals).toEqual({ pending: 1, expired: 1 });
    expect(report.model).toEqual({ configured: true, provider: 'openai-compatible', modelId: 'llama3.1', host: 'llm.example.com', embedder: false });
    const text = formatDoctorReport(report);
    expect(text).not.toMatch(/sk-secret|key=abc|user:/);
    expect(text).toContain('demotion due 1');
    expect(text).toContain('Audit log: 1 rows; hash chain verified (1 chained rows).');
    expect(text).toContain(`memory extraction queue: 1 turns waiting (oldest queued ${at(5)})`);
    expect((await runDoctor({ storage, memory, now: () => NOW, verifyAuditChain: false })).audit).toEqual({ rows: 1 });
    await expect(runDoctor({ storage, verifyAuditChain: 'yes' as unknown as boolean })).rejects.toThrow(/verifyAuditChain must be a boolean, got "yes"/);
    expect(report.warnings.join('\n')).toMatch(/1 trade cases have waited more than 72 h/);
    expect(report.warnings.join('\n')).toMatch(/meet the demotion rule/);

    const anon = await runDoctor({ storage, memory, now: () => NOW, anonymous: true, modelStatus: { configured: true, provider: 'anthropic', modelId: 'claude-x', label: 'y' } });
    expect(anon.memory.softDeleted).toBe('1–9');
    expect(anon.learning.cases.pending).toBe('1–9');
    expect(anon.memory.embedding.failed).toBe('0');
    expect(anon.memory.topEntities).toEqual([]);
    expect(anon.learning.extractionQueue).toEqual({ waiting: '1–9' });
    expect(anon.model).toEqual({ configured: true, provider: 'anthropic' });
    for (const section of [anon.memory, anon.learning, anon.approvals, anon.audit]) expect(JSON.stringify(section)).not.toMatch(/"[A-Za-z]+":\d/);
    expect([bucketCount(0), bucketCount(7), bucketCount(10), bucketCount(999), bucketCount(1000)]).toEqual(['0', '1–9', '10–99', '100–999', '1000–9999']);
    await memory.close();
    await storage.close();
  });

  it('bad options name the field', async () => {
    const storage = make();
    await expect(runDoctor({ storage: {} as Storage })).rejects.toThrow(/storage must be a Storage/);
    await expect(runDoctor({ storage, scope: { userId: '' } })).rejects.toThrow(/scope.userId/);
    await expect(runDoctorFixes({ storage, only: ['bogus' as never] })).rejects.toThrow(/only must name one or more of permissions, embeddings, edges, methodology_demotion, reflect_pending/);
    await expect(runDoctorFixes({ storage, only: ['permissions'], privatePaths: [''] })).rejects.toThrow(/privatePaths must be a list of directory paths/);
    await expect(runDoctor({ storage, overdueAfterMs: -1 })).rejects.toThrow(/overdueAfterMs/);
    await storage.close();
  });
});

describe.each(engines)('runDoctorFixes ($name)', ({ make }) => {
  it('a dry run counts and writes nothing; apply fixes, audits one row per changed action; a second apply writes nothing', async () => {
    const storage = make();
    const { memory: plain, ids, due } = await seed(storage);
    await plain.close();
    const embedder = createFakeEmbedder({ dimensions: 8 });
    const memory = createMemoryStore({ storage, scope: S, embedder, now: () => NOW, logger: silentLogger });
    const before = await fingerprint(storage);

    const dry = await runDoctorFixes({ storage, memory, now: () => NOW });
    expect(dry.apply).toBe(false);
    expect(dry.fixes.map((f) => [f.name, f.candidates, f.applied])).toEqual([['permissions', 0, 0], ['embeddings', 3, 0], ['edges', 1, 0], ['methodology_demotion', 1, 0]]);
    expect(await fingerprint(storage)).toEqual(before);
    expect((await storage.memory.stats(S)).embedding.pending).toBe(3);
    expect(formatDoctorFixReport(dry)).toContain('dry run: nothing written');

    const applied = await runDoctorFixes({ storage, memory, apply: true, now: () => NOW });
    // Without a vector index (Postgres without pgvector) the embeddings fix says why and changes nothing.
    const vectors = (await storage.memory.vectorInfo()).available;
    expect(applied.fixes.map((f) => [f.name, f.candidates, f.applied])).toEqual([['permissions', 0, 0], ['embeddings', 3, vectors ? 3 : 0], ['edges', 1, 1], ['methodology_demotion', 1, 1]]);
    if (vectors) expect((await storage.memory.stats(S)).embedding).toMatchObject({ pending: 0, embedded: 3 });
    else expect(applied.fixes.find((f) => f.name === 'embeddings')!.skipped).toMatch(/no embedder or no vector index/);
    expect((await storage.memory.edgesForMemories(S, [ids[0]!.id])).map((e) => e.entityKey).sort()).toEqual(['BTC', 'BTC|ETH', 'ETH']);
    expect((await storage.learning.getMethodology(S, due.id))!.state).toBe('quarantined');
    const audit = (await storage.audit.query({ limit: 100 })).filter((a) => a.toolName.startsWith('doctor.fix.'));
    expect(audit.map((a) => a.toolName).sort()).toEqual([...(vectors ? ['doctor.fix.edges', 'doctor.fix.embeddings'] : ['doctor.fix.edges']), 'doctor.fix.methodology_demotion']);
    expect(JSON.parse(audit.find((a) => a.toolName === 'doctor.fix.edges')!.argsJson)).toMatchObject({ userId: 'default', candidates: 1, applied: 1 });
    // The edited row kept its updatedAt (a fix is not an edit).
    expect((await storage.memory.get(S, ids[0]!.id))!.updatedAt).toBe(NOW.toISOString());

    const settled = await fingerprint(storage);
    const again = await runDoctorFixes({ storage, memory, apply: true, now: () => NOW });
    expect(again.fixes.every((f) => f.applied === 0 && (f.candidates === 0 || (!vectors && f.name === 'embeddings')))).toBe(true);
    expect(await fingerprint(storage)).toEqual(settled);
    await memory.close();
    await storage.close();
  });

  it('the safety envelope: never deletes, graduates, activates, rewrites a reflection or changes an audit row — across every fix, reflect_pending included', async () => {
    const storage = make();
    const seeded = await seed(storage);
    const before = await fingerprint(storage);
    // reflect_pending with a model that answers: only the overdue case is reflected; the reflected one is not rewritten.
    const model = createScriptedModel([
      { text: JSON.stringify({ classification: 'exogenous', rationale: 'news' }) },
      { text: JSON.stringify({ lessons: ['Check the calendar before entries.'], methodology: null }) },
    ]);
    const learning = createLearningStore({ storage, scope: S, memory: seeded.memory, model, now: () => NOW, logger: silentLogger });
    const r = await runDoctorFixes({ storage, memory: seeded.memory, learning, apply: true, only: [...DEFAULT_DOCTOR_FIXES, 'reflect_pending'], now: () => NOW });
    expect(r.fixes.find((f) => f.name === 'reflect_pending')).toMatchObject({ candidates: 1, applied: 1 });
    const after = await fingerprint(storage);
    // No row deleted (every id still there; soft-deleted stays soft-deleted; new lesson rows only added).
    for (const row of before.rows) expect(after.rows).toContainEqual(row);
    // Never graduates: the proposed candidate is still a candidate; states only moved towards quarantine.
    expect((await storage.learning.getMethodology(S, seeded.proposed.id))!.state).toBe('candidate');
    for (const [id, state] of after.methodologies) if (state === 'graduated') expect(before.methodologies).toContainEqual([id, 'graduated']);
    // Never activates a preference: the hard constraint and the behavioural one with 9/9 evidence stay proposed.
    expect(after.preferences).toEqual(before.preferences);
    // Never rewrites a reflection.
    const reflectedBefore = before.reflections.find(([id]) => id === seeded.reflected.id);
    expect(after.reflections).toContainEqual(reflectedBefore);
    // The audit log only grew: every earlier row is unchanged.
    for (const row of before.audit) expect(after.audit).toContainEqual(row);
    expect(after.profile).toEqual(before.profile);
    model.assertConsumed();
    learning.close();
    await seeded.memory.close();
    await storage.close();
  });

  it('reflect_pending never runs by default (no model call), and is skipped without a model', async () => {
    const storage = make();
    const { memory } = await seed(storage);
    const model = createScriptedModel([]);
    const learning = createLearningStore({ storage, scope: S, memory, model, now: () => NOW, logger: silentLogger });
    const r = await runDoctorFixes({ storage, memory, learning, apply: true, now: () => NOW });
    expect(r.fixes.map((f) => f.name)).toEqual(['permissions', 'embeddings', 'edges', 'methodology_demotion']);
    expect(model.calls).toHaveLength(0);
    const noModel = createLearningStore({ storage, scope: S, memory, now: () => NOW, logger: silentLogger });
    expect((await runDoctorFixes({ storage, learning: noModel, apply: true, only: ['reflect_pending'], now: () => NOW })).fixes[0]).toMatchObject({ applied: 0, skipped: 'no model is configured' });
    // Without an embedder the embeddings fix reports why nothing was embedded and writes no audit row.
    const e = await runDoctorFixes({ storage, memory, apply: true, only: ['embeddings'], now: () => NOW });
    expect(e.fixes[0]!.skipped).toMatch(/no embedder/);
    expect((await storage.audit.query({ limit: 100 })).some((a) => a.toolName === 'doctor.fix.embeddings')).toBe(false);
    learning.close();
    noModel.close();
    await memory.close();
    await storage.close();
  });
});

describe('runDoctor walks the audit chain', () => {
  it('an audit row edited in the SQLite file behind the writer is a warning naming the row; anonymous leaves the detail out', async () => {
    const d = mkdtempSync(path.join(tmpdir(), 'minara-doctor-chain-'));
    dirs.push(d);
    const file = path.join(d, 'minara.db');
    const storage = createSqliteStorage({ path: file, logger: silentLogger });
    for (let i = 1; i <= 3; i++) {
      await storage.audit.append({ at: at(0), toolName: 'buy_token', tier: 2, source: 'cron', userId: 'default', decision: 'allowed', durationMs: 1, argsJson: JSON.stringify({ symbol: 'ETH', amountUsd: 10 * i }) });
    }
    expect((await runDoctor({ storage, now: () => NOW })).warnings.join('\n')).not.toMatch(/hash chain/);
    const { default: Database } = await import('better-sqlite3');
    const raw = new Database(file);
    raw.prepare("UPDATE audit_log SET args_json = ? WHERE id = (SELECT MIN(id) + 1 FROM audit_log)").run(JSON.stringify({ symbol: 'ETH', amountUsd: 1 }));
    raw.close();
    const report = await runDoctor({ storage, now: () => NOW });
    expect(report.audit.chain).toMatchObject({ ok: false, checked: 3, problems: 1, firstProblem: expect.stringMatching(/edited/) });
    expect(report.warnings.join('\n')).toMatch(/The audit log's hash chain does not verify: 1 problems \(first: .*edited.*\).*"minara audit verify" lists them/);
    expect(formatDoctorReport(report)).toContain('hash chain BROKEN (1 problems)');
    const anon = await runDoctor({ storage, now: () => NOW, anonymous: true });
    expect(anon.audit.chain).toEqual({ ok: false, checked: '1–9', problems: '1–9' });
    expect(anon.warnings.join('\n')).toMatch(/hash chain does not verify: 1–9 problems; a row was edited/);
    await storage.close();
  });
});

describe.each(engines)('runDoctor snapshot dirty counters ($name)', ({ make }) => {
  it('counts memory writes and profile changes since the newest session froze its snapshot, per scope', async () => {
    const storage = make();
    let t = Date.parse('2026-06-01T00:00:00.000Z');
    const clock = () => new Date((t += 1000));
    const memory = createMemoryStore({ storage, scope: S, now: clock, logger: silentLogger });
    const other = createMemoryStore({ storage, scope: { userId: 'other' }, now: clock, logger: silentLogger });
    await memory.write({ category: 'preference', content: 'before the session' });
    await memory.profile.set('risk_tolerance', 'moderate');
    // No session yet: nothing is frozen, so no dirty counters.
    expect((await runDoctor({ storage, memory, now: () => NOW, verifyAuditChain: false })).memory.snapshot?.dirty).toBeUndefined();
    await storage.conversations.ensureSession({ id: 'sess-1', userId: 'default', now: clock().toISOString() });
    await memory.write({ category: 'preference', content: 'after the session started' });
    const edited = await memory.write({ category: 'lesson', content: 'written then edited' });
    await memory.update(edited.id, { content: 'edited after the session started' });
    await memory.profile.set('preferred_chains', 'base');
    await other.write({ category: 'preference', content: 'another tenant' });
    const report = await runDoctor({ storage, memory, now: () => NOW, verifyAuditChain: false });
    const dirty: SnapshotDirtyCounters | undefined = report.memory.snapshot?.dirty;
    expect(dirty).toEqual({ sessionId: 'sess-1', since: expect.any(String), memoryWrites: 2, profileWrites: 1 });
    expect(formatDoctorReport(report)).toMatch(/snapshot dirty: 2 memory writes, 1 profile changes since session sess-1 froze its snapshot/);
    const anon = await runDoctor({ storage, memory, now: () => NOW, verifyAuditChain: false, anonymous: true });
    expect(anon.memory.snapshot?.dirty).toEqual({ since: expect.any(String), memoryWrites: '1–9', profileWrites: '1–9' });
    await memory.close();
    await other.close();
    await storage.close();
  });
});
