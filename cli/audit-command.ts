/**
 * `minara audit`: the audit trail for the operator. `list` (newest first, filtered), `trace <id>` (what one
 * alert, schedule entry or turn did, in order), `verify` (walk the keyed hash chain against the newest signed
 * checkpoint; prints the head to keep elsewhere), `export` (JSONL or CSV, oldest first), `checkpoint` (sign one
 * now), `prove <seq>` (an inclusion proof), `verify-proof <file> --public-key <pem>` (offline, no app) and
 * `public-key`.
 */
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import type { AuditEntry, AuditFilter, AuditVerifyReport, MinaraApp } from '@minara/agent';
import type { CliOptions } from './app';
import { compactJson, truncate } from './render';

/** Flags of `minara audit`. */
export interface AuditCommandOptions {
  readonly user?: string | undefined;
  readonly trace?: string | undefined;
  readonly tool?: string | undefined;
  /** An ISO time, or a span back from now: `30m`, `24h`, `7d`. */
  readonly since?: string | undefined;
  readonly limit?: string | undefined;
  readonly json?: boolean | undefined;
  readonly format?: string | undefined;
  readonly out?: string | undefined;
  readonly anchor?: string | undefined;
  /** A checkpoint file kept elsewhere (JSONL), read besides the app's sinks. */
  readonly checkpoints?: string | undefined;
  /** A public key file (PEM) for verify-proof. */
  readonly publicKey?: string | undefined;
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
  /** Use this app instead of building one (tests). */
  readonly app?: MinaraApp | undefined;
  readonly now?: (() => Date) | undefined;
}

const USAGE = `usage: minara audit list [--user id] [--trace id] [--tool name] [--since 24h|ISO] [--limit n] [--json]
       minara audit trace <trace-id> [--json]
       minara audit verify [--anchor seq:hash] [--checkpoints file] [--json]
       minara audit export --format jsonl|csv [--out file] [--user id] [--trace id] [--tool name] [--since 24h|ISO]
       minara audit checkpoint [--json]
       minara audit prove <seq> [--out file]
       minara audit verify-proof <proof file> --public-key <pem file> [--json]
       minara audit public-key`;

/** `24h`, `30m`, `7d` back from now, or an ISO time; undefined when absent; throws a usage message otherwise. */
export function parseSince(value: string | undefined, now: Date): string | undefined {
  if (value === undefined) return undefined;
  const span = /^(\d{1,6})([mhd])$/u.exec(value);
  if (span) return new Date(now.getTime() - Number(span[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[span[2] as 'm' | 'h' | 'd']).toISOString();
  if (Number.isNaN(Date.parse(value))) throw new Error(`--since: expected a span like 30m, 24h, 7d or an ISO time, got ${JSON.stringify(value)}`);
  return new Date(value).toISOString();
}

const usd = (n: number | undefined) => (n === undefined ? '?' : `${n < 0 ? '-' : ''}$${Math.abs(n).toLocaleString('en-US', { maximumFractionDigits: 2 })}`);

/** What a row did, in one line (the outcome of a call; the detail of the other kinds). */
export function describeAuditRow(e: AuditEntry): string {
  const d = e.detail ?? {};
  switch (e.kind ?? 'tool_call') {
    case 'signal':
      return `signal ${e.toolName} from ${e.source}${typeof d['asset'] === 'string' ? ` (${d['asset']})` : ''}: ${truncate(String((JSON.parse(e.argsJson) as { message?: string }).message ?? ''), 100)}`;
    case 'skill_activation':
      return `skills ${Array.isArray(d['skillIds']) ? (d['skillIds'] as string[]).join(', ') : e.toolName} (via ${String(d['via'] ?? '?')})`;
    case 'turn':
      return `turn ${String(d['stopReason'] ?? e.decision)} after ${String(d['steps'] ?? '?')} step(s)${typeof d['answer'] === 'string' && d['answer'] ? `: ${truncate(d['answer'], 100)}` : ''}`;
    case 'job_run':
      return `job ${e.toolName} ${String(d['outcome'] ?? e.decision)}${typeof d['note'] === 'string' ? `: ${d['note']}` : ''}${e.reason ? `: ${e.reason}` : ''}`;
    case 'breaker':
      return `breaker ${e.toolName} ${e.decision === 'blocked' ? 'tripped' : 'reset'}${e.reason ? `: ${e.reason}` : ''}`;
    case 'input_flag':
      return `flagged ${e.code ?? ''} ${e.reason ?? ''}`.trim();
    default: {
      const o = e.outcome;
      const f = o?.fill;
      const result = f
        ? `${o?.status ?? 'ok'} ${o?.orderId ?? ''} ${f.quantity ?? '?'} ${f.symbol ?? ''} @ ${usd(f.priceUsd)} = ${usd(f.notionalUsd)} fee ${usd(f.feeUsd)}${f.realizedPnlUsd ? ` pnl ${usd(f.realizedPnlUsd)}` : ''}${o?.txHash ? ` tx ${o.txHash}` : ''}${o?.shadow ? ' (shadow)' : o?.simulated ? ' (paper)' : ''}`
        : `${o?.status ?? e.decision}${o?.errorCode ? ` ${o.errorCode}` : e.code ? ` ${e.code}` : ''}${o?.orderId ? ` ${o.orderId}` : ''}`;
      return `${e.toolName} ${compactJson(JSON.parse(e.argsJson) as unknown, 70)} → ${e.decision}: ${result.replace(/\s+/gu, ' ').trim()}${e.reason && !e.outcome?.fill ? ` (${truncate(e.reason, 80)})` : ''}`;
    }
  }
}

function line(e: AuditEntry): string {
  return `#${e.id}${e.chain ? `/${e.chain.seq}` : ''}  ${e.at}  ${(e.kind ?? 'tool_call').padEnd(16)} ${(e.userId ?? '-').padEnd(10)} ${describeAuditRow(e)}\n`;
}

/** The verify report as text; the last line is the head to keep outside the database. */
export function formatVerifyReport(r: AuditVerifyReport): string {
  const k = r.keyed;
  const cps = r.checkpoints;
  const out = [
    r.ok ? `Audit chain intact: ${r.checked} chained row(s) verified.` : `Audit chain BROKEN: ${r.problems.length} problem(s) in ${r.checked} chained row(s).`,
    ...(r.unchainedPrefix > 0 ? [`${r.unchainedPrefix} row(s) were written before the chain began: kept and listed, not verifiable.`] : []),
    ...(k && k.legacyLinks > 0 ? [`${k.legacyLinks} row(s) (seq 1–${k.legacyLinks}) carry legacy links (plain SHA-256, written before keyed links): a database writer could recompute them; checkpoints cover them.`] : []),
    ...(k?.from !== undefined ? [`Keyed links (HMAC-SHA256, key outside the database) from seq ${k.from}${k.keyChecked ? '' : ' — NOT recomputed: this process does not hold the audit key'}.`] : []),
    ...(cps ? [cps.newest ? `Checked against the newest signed checkpoint: seq ${cps.newest.seq} at ${cps.newest.at} (${cps.newest.instance}); ${cps.valid} of ${cps.read} checkpoint line(s) valid.` : `No signed checkpoint found (${cps.read} line(s) read): a truncated tail cannot be detected yet; run \`minara audit checkpoint\`.`] : []),
    ...r.problems.map((p) => `  ${p.kind}${p.seq !== undefined ? ` at seq ${p.seq}` : ''}: ${p.message}`),
    `Head: ${r.head.seq}:${r.head.hash}`,
    'Keep the head somewhere the database cannot reach; `minara audit verify --anchor <head>` later proves nothing up to it was rewritten.',
  ];
  return `${out.join('\n')}\n`;
}

export async function runAuditCommand(cli: CliOptions, positionals: readonly string[], options: AuditCommandOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = options.writeErr ?? ((s: string) => process.stderr.write(s));
  const [verb = 'list', arg, ...rest] = positionals;
  const takesArg = verb === 'trace' || verb === 'prove' || verb === 'verify-proof';
  if (!['list', 'trace', 'verify', 'export', 'checkpoint', 'prove', 'verify-proof', 'public-key'].includes(verb) || rest.length > 0 || takesArg !== (arg !== undefined)) {
    writeErr(`minara: ${USAGE}\n`);
    return 2;
  }
  if (verb === 'verify-proof') return verifyProofFile(arg!, options, write, writeErr);
  if (verb === 'prove' && !/^\d{1,15}$/u.test(arg!)) {
    writeErr(`minara: prove expects a row's chain position (the number after the / in \`minara audit list\`), got ${JSON.stringify(arg)}\n`);
    return 2;
  }
  let filter: AuditFilter;
  let limit = 50;
  try {
    const since = parseSince(options.since, (options.now ?? (() => new Date()))());
    filter = {
      ...(options.user ? { userId: options.user } : {}), ...(options.trace ? { traceId: options.trace } : {}), ...(options.tool ? { toolName: options.tool } : {}), ...(since ? { since } : {}),
    };
    if (options.limit !== undefined) {
      if (!/^\d{1,4}$/u.test(options.limit) || Number(options.limit) < 1) throw new Error(`--limit: expected a positive integer, got ${JSON.stringify(options.limit)}`);
      limit = Number(options.limit);
    }
    if (verb === 'export' && options.format !== 'jsonl' && options.format !== 'csv') throw new Error(`--format: expected jsonl or csv, got ${JSON.stringify(options.format ?? '')}`);
    if (verb !== 'export' && options.format !== undefined) throw new Error('--format only applies to export');
    if (verb !== 'export' && verb !== 'prove' && options.out !== undefined) throw new Error('--out only applies to export and prove');
    if (verb !== 'verify' && options.checkpoints !== undefined) throw new Error('--checkpoints only applies to verify');
    if (options.publicKey !== undefined) throw new Error('--public-key only applies to verify-proof');
    if (verb !== 'verify' && options.anchor !== undefined) throw new Error('--anchor only applies to verify');
  } catch (error) {
    writeErr(`minara: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const { buildApp } = await import('./app');
  const app = options.app ?? (await buildApp(cli, { surface: 'cli', mcp: false }));
  const { exportAudit, readAuditTrace } = await import('@minara/agent');
  try {
    const storage = app.storage;
    if (verb === 'verify') {
      const extra = options.checkpoints !== undefined ? readFileSync(options.checkpoints, 'utf8').split('\n').filter((l) => l.trim() !== '') : [];
      const anchor = options.anchor !== undefined ? { anchor: options.anchor } : {};
      const report = app.auditIntegrity ? await app.auditIntegrity.verify({ ...anchor, checkpoints: extra }) : await storage.audit.verify(anchor);
      write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatVerifyReport(report));
      return report.ok ? 0 : 1;
    }
    if (verb === 'checkpoint' || verb === 'prove' || verb === 'public-key') {
      const integrity = app.auditIntegrity;
      if (!integrity) {
        writeErr('minara: audit integrity is off in this app (auditIntegrity: false): no key, no checkpoints\n');
        return 1;
      }
      if (verb === 'public-key') {
        write(integrity.publicKeyPem);
        return 0;
      }
      if (verb === 'checkpoint') {
        const cp = await integrity.checkpoint();
        write(options.json ? `${JSON.stringify(cp, null, 2)}\n` : `Checkpoint signed: seq ${cp.seq}, head ${cp.head}, at ${cp.at} (${cp.instance}, key ${cp.keyId}); written to ${integrity.sinks.map((s) => s.name).join(', ')}.\n`);
        return 0;
      }
      const proof = await integrity.prove(Number(arg));
      const text = `${JSON.stringify(proof, null, 2)}\n`;
      if (options.out !== undefined) {
        writeFileSync(options.out, text, { mode: 0o600 });
        writeErr(`Inclusion proof of seq ${proof.seq} in a tree of ${proof.treeHead.treeSize} row(s) written to ${options.out}. Check it anywhere with \`minara audit verify-proof ${options.out} --public-key <pem>\` or verifyAuditProof().\n`);
      } else write(text);
      return 0;
    }
    if (verb === 'export') {
      const format = options.format as 'jsonl' | 'csv';
      const file = options.out !== undefined ? createWriteStream(options.out, { mode: 0o600 }) : undefined;
      const n = await exportAudit({ storage, format, filter, write: (chunk) => (file ? new Promise<void>((resolve, reject) => file.write(chunk, (e) => (e ? reject(e) : resolve()))) : write(chunk)) });
      if (file) {
        await new Promise<void>((resolve, reject) => file.end((e?: Error | null) => (e ? reject(e) : resolve())));
        writeErr(`Exported ${n} row(s) to ${options.out}.\n`);
      }
      return 0;
    }
    const rows = verb === 'trace' ? await readAuditTrace(storage, arg!) : await storage.audit.query({ ...filter, limit });
    if (options.json) {
      write(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      write(verb === 'trace' ? `No audit rows for trace ${arg}.\n` : 'No audit rows match.\n');
      return verb === 'trace' ? 1 : 0;
    }
    if (verb === 'trace') write(`Trace ${arg}: ${rows.length} row(s), oldest first\n`);
    for (const r of rows) write(line(r));
    return 0;
  } finally {
    if (!options.app) await app.close();
  }
}

/** `verify-proof <file> --public-key <pem>`: offline, no app, no data directory. Exit 0 valid, 1 invalid, 2 usage. */
async function verifyProofFile(file: string, options: AuditCommandOptions, write: (s: string) => void, writeErr: (s: string) => void): Promise<number> {
  if (options.publicKey === undefined) {
    writeErr('minara: verify-proof needs --public-key <file> (the PEM `minara audit public-key` printed, kept off the machine)\n');
    return 2;
  }
  const { verifyAuditProof } = await import('@minara/agent');
  let proof: unknown;
  let pem: string;
  try {
    proof = JSON.parse(readFileSync(file, 'utf8'));
    pem = readFileSync(options.publicKey, 'utf8');
  } catch (error) {
    writeErr(`minara: verify-proof: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const check = verifyAuditProof(proof, pem);
  if (options.json) write(`${JSON.stringify(check, null, 2)}\n`);
  else if (check.ok) write(`Proof valid: seq ${check.seq} is in the signed tree of ${check.treeSize} row(s) (${check.treeHead.instance}, ${check.treeHead.at}).\nRow: ${JSON.stringify(check.row)}\n`);
  else write(`Proof INVALID: ${check.reason}\n`);
  return check.ok ? 0 : 1;
}
