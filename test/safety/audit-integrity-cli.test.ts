/**
 * The audit trail's integrity through the app, the CLI and doctor: `createApp` keys the links and writes signed
 * checkpoints to the data directory (and at close); `minara audit checkpoint`, `prove <seq>`, `verify-proof`
 * (offline, with the public key alone) and `public-key`; after a truncation with the counter rolled back,
 * `minara audit verify` exits 1 naming the rows and `minara doctor` reports it.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { AUDIT_CHECKPOINT_FILE, AUDIT_PUBLIC_KEY_FILE, createApp, formatDoctorReport, type MinaraApp, runDoctor, silentLogger, verifyAuditProof } from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { createScriptedModel } from '@minara/agent/testing';
import { runAuditCommand } from '../../cli/audit-command';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const open = (dataDir: string, env: Record<string, string> = {}): Promise<MinaraApp> =>
  createApp({ envFileDir: false, env: { MINARA_PERSONALIZATION_REBUILD: 'disabled', MINARA_HEARTBEAT_EVERY: '0', ...env }, logger: silentLogger, model: createScriptedModel([]), config: { dataDir } });

const entry = (i: number) => ({ at: `2026-11-01T14:03:0${i}.000Z`, toolName: i === 2 ? 'withdraw_funds' : 'get_price', tier: i === 2 ? 4 : 0, source: 'user', decision: 'allowed' as const, durationMs: 1, argsJson: JSON.stringify({ i }) });

describe('minara audit: checkpoint, prove, verify-proof, verify after an attack; doctor', () => {
  it('the whole path', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'minara-audit-cli-'));
    dirs.push(root);
    const dataDir = path.join(root, 'data');
    let out = '';
    let errText = '';
    const write = (s: string) => void (out += s);
    const writeErr = (s: string) => void (errText += s);

    let app = await open(dataDir);
    for (let i = 1; i <= 4; i++) await app.storage.audit.append(entry(i));
    expect(app.auditIntegrity).toBeDefined();
    expect(await runAuditCommand({}, ['checkpoint'], { app, write })).toBe(0);
    expect(out).toMatch(/Checkpoint signed: seq \d+, head [0-9a-f]{64}/);
    const cpFile = path.join(dataDir, AUDIT_CHECKPOINT_FILE);
    expect(statSync(cpFile).mode & 0o777).toBe(0o600);
    out = '';
    expect(await runAuditCommand({}, ['public-key'], { app, write })).toBe(0);
    expect(out).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const pemFile = path.join(root, 'auditor.pub.pem'); // the copy an auditor keeps off the machine
    writeFileSync(pemFile, out);
    expect(readFileSync(path.join(dataDir, AUDIT_PUBLIC_KEY_FILE), 'utf8')).toBe(out);

    const seqOf = async (toolName: string) => (await app.storage.audit.query({ toolName }))[0]!.chain!.seq;
    const withdrawal = await seqOf('withdraw_funds');
    const proofFile = path.join(root, 'row.proof.json');
    expect(await runAuditCommand({}, ['prove', String(withdrawal)], { app, out: proofFile, writeErr })).toBe(0);
    expect(errText).toContain(`Inclusion proof of seq ${withdrawal}`);
    expect(await runAuditCommand({}, ['prove', 'abc'], { app, writeErr })).toBe(2);
    const total = (await app.storage.audit.head()).seq;
    await app.close(); // a closing checkpoint if rows came since

    // Offline: no app, only the proof and the public key.
    out = '';
    expect(await runAuditCommand({}, ['verify-proof', proofFile], { publicKey: pemFile, write })).toBe(0);
    expect(out).toContain(`Proof valid: seq ${withdrawal}`);
    expect(out).toContain('withdraw_funds');
    const proof = JSON.parse(readFileSync(proofFile, 'utf8')) as { leaf: string };
    writeFileSync(proofFile, JSON.stringify({ ...proof, leaf: proof.leaf.replace('withdraw_funds', 'get_price') }));
    out = '';
    expect(await runAuditCommand({}, ['verify-proof', proofFile], { publicKey: pemFile, write })).toBe(1);
    expect(out).toContain('Proof INVALID');
    expect(verifyAuditProof(proof, readFileSync(pemFile, 'utf8')).ok).toBe(true);
    expect(await runAuditCommand({}, ['verify-proof', proofFile], { writeErr })).toBe(2);

    // The attack: the newest two rows deleted and sqlite_sequence rolled back, directly in the file.
    const db = new Database(path.join(dataDir, 'minara.db'));
    db.prepare('DELETE FROM audit_log WHERE seq > ?').run(total - 2);
    db.prepare("UPDATE sqlite_sequence SET seq = (SELECT MAX(id) FROM audit_log) WHERE name = 'audit_log'").run();
    db.close();

    app = await open(dataDir);
    try {
      out = '';
      expect(await runAuditCommand({}, ['verify'], { app, write })).toBe(1);
      expect(out).toContain('Audit chain BROKEN');
      expect(out).toContain(`truncated at seq ${total - 1}: the log ends at seq ${total - 2}, but a signed checkpoint recorded seq ${total}`);
      const report = await runDoctor({ storage: app.storage, auditIntegrity: app.auditIntegrity, verifyAuditChain: true });
      expect(report.audit.chain).toMatchObject({ ok: false, problems: 1 });
      expect(report.warnings.join('\n')).toMatch(/hash chain does not verify: 1 problems \(first: the log ends at seq \d+, but a signed checkpoint recorded/);
      expect(formatDoctorReport(report)).toContain('hash chain BROKEN (1 problems)');
      // The gateway's operator route verifies the same way.
      const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, auditIntegrity: app.auditIntegrity, logger: silentLogger, trustUserHeader: true });
      const res = await gateway.fetch(new Request('http://127.0.0.1/v1/audit/verify', { headers: { 'x-minara-user': 'ops', 'x-minara-roles': 'operator' } }));
      expect(JSON.parse(await res.text())).toMatchObject({ ok: false, problems: [{ kind: 'truncated', seq: total - 1 }], checkpoints: { newest: { seq: total } } });
    } finally {
      await app.close();
    }
  });

  it('checkpoint settings from the environment are checked', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'minara-audit-cli-'));
    dirs.push(root);
    await expect(open(path.join(root, 'data'), { MINARA_AUDIT_CHECKPOINT_ROWS: '0' })).rejects.toThrow(/MINARA_AUDIT_CHECKPOINT_ROWS: expected a positive integer, got "0"/);
    await expect(open(path.join(root, 'data'), { MINARA_AUDIT_CHECKPOINT_URL: 'http://collector.example.com/cp' })).rejects.toThrow(/https:\/\//);
  });
});
