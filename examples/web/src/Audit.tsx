import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, apiUrl, authHeaders } from './api';
import { asNum, asObj, asStr, describeOrder, formatSignedUsd, formatUnits, formatUsd, type Json } from './format';
import { TableScroll } from './ToolCards';

/** One audit row as `GET /v1/audit` answers (the fields this page shows). */
interface AuditRow {
  readonly id: number;
  readonly at: string;
  readonly kind?: string;
  readonly toolName: string;
  readonly source: string;
  readonly userId?: string;
  readonly traceId?: string;
  readonly decision: string;
  readonly code?: string;
  readonly reason?: string;
  readonly outcome?: Json;
  readonly argsJson?: string;
}

/** Rows of the engine's own bookkeeping: the safety stage's checks, skill routing, the row written before a call runs. */
const ENGINE_TOOLS = new Set(['finance_safety', 'tool_invoke', 'tool_search']);
function isEngineRow(r: AuditRow): boolean {
  if (r.kind && r.kind !== 'tool_call' && r.kind !== 'grant' && r.kind !== 'stop' && r.kind !== 'breaker') return true;
  // The preview a fund-moving call runs for its approval card is part of asking, not an action of its own.
  return r.decision === 'executing' || asStr(r.outcome?.['status']) === 'preview' || ENGINE_TOOLS.has(r.toolName) || r.toolName.startsWith('skill');
}

const args = (r: AuditRow): unknown => {
  try {
    return r.argsJson ? (JSON.parse(r.argsJson) as unknown) : undefined;
  } catch {
    return undefined;
  }
};

/** The action in a person's words: the order ("Buy $50.00 of ETH"), else the tool and what it was about. */
function actionText(r: AuditRow): string {
  const input = args(r);
  const order = describeOrder({ toolName: r.toolName, input });
  if (order) return order;
  const a = asObj(input);
  const about = a ? asStr(a['symbol']) ?? asStr(a['query']) ?? asStr(a['asset']) : undefined;
  const name = r.toolName.replace(/[_.]/g, ' ');
  return about ? `${name}: ${about}` : name;
}

/** What came of it: asked, approved, filled, refused, failed. */
/** A fill in a person's words ("Filled: 0.01376894 ETH at $3,631.36 for $50.00, paper"); undefined when nothing filled. */
function fillText(r: AuditRow): string | undefined {
  const o = r.outcome;
  const fill = o ? asObj(o['fill']) : undefined;
  if (!o || !fill) return undefined;
  const qty = asNum(fill['quantity']);
  const price = asNum(fill['priceUsd']);
  const notional = asNum(fill['notionalUsd']);
  const pnl = asNum(fill['realizedPnlUsd']);
  const words = [
    `${asStr(o['status']) === 'duplicate' ? 'Already filled' : 'Filled'}:`,
    qty !== undefined ? `${formatUnits(qty)} ${asStr(fill['symbol']) ?? ''}`.trim() : undefined,
    price !== undefined ? `at ${formatUsd(price)}` : undefined,
    notional !== undefined ? `for ${formatUsd(notional)}` : undefined,
  ].filter(Boolean);
  const tail = [pnl !== undefined && Math.abs(pnl) >= 0.005 ? `realised ${formatSignedUsd(pnl)}` : undefined, o['shadow'] === true ? 'shadow' : o['simulated'] === true ? 'paper' : undefined].filter(Boolean);
  return `${words.join(' ')}${tail.length ? `, ${tail.join(', ')}` : ''}`;
}

function resultText(r: AuditRow): string {
  const o = r.outcome ? outcomeText(r) : undefined;
  const status = asStr(r.outcome?.['status']);
  // A call that simply worked (a price, a memory) is "Done"; a fill says what filled; anything else its outcome.
  const done = fillText(r) ?? (status === 'ok' || o === undefined || o === 'allowed' || o === 'approved' ? undefined : o);
  switch (r.decision) {
    case 'approval_required':
      return 'Asked for your approval';
    case 'approved':
      return done ? `You approved it. ${done}` : 'You approved it';
    case 'denied':
      return `Refused: you denied it${r.reason ? ` (${r.reason})` : ''}`;
    case 'blocked':
      return `Refused${r.code ? ` (${r.code})` : ''}${r.reason ? `: ${r.reason}` : ''}`;
    case 'error':
      return `Failed${r.code ? ` (${r.code})` : ''}`;
    default:
      return done ?? 'Done';
  }
}

const shortTime = (iso: string) => new Date(iso).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

/** The default view: what the agent did for you, one line each, newest first. */
function PersonRows({ rows, onTrace }: { rows: readonly AuditRow[]; onTrace: (id: string) => void }) {
  return (
    <TableScroll label="What the agent did for you">
      <table className="grid audit-person" data-testid="audit-rows">
        <caption>What the agent did for you, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <th scope="row" className="when" title={r.at}>
                {shortTime(r.at)}
              </th>
              <td>
                {actionText(r)}
                {r.source !== 'user' ? <span className="muted"> ({r.source})</span> : null}
              </td>
              <td className="outcome">
                {resultText(r)}
                {r.traceId ? (
                  <button type="button" className="link" onClick={() => onTrace(r.traceId!)} title={r.traceId}>
                    details<span className="visually-hidden"> (show this trace)</span>
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

interface VerifyReport {
  readonly ok: boolean;
  readonly checked: number;
  readonly problems: ReadonlyArray<{ readonly kind?: string; readonly seq?: number; readonly message?: string }>;
  readonly head?: { readonly seq: number; readonly hash: string } | null;
}

/** What happened, in words: the fill, the order id, the transaction, or why it did not run. */
function outcomeText(row: AuditRow): string {
  const o = row.outcome;
  if (!o) return row.code ? `${row.decision}: ${row.code}` : row.decision;
  const fill = asObj(o['fill']);
  const parts: string[] = [];
  const status = asStr(o['status']);
  if (status) parts.push(status);
  if (fill) {
    const qty = asNum(fill['quantity']);
    const price = asNum(fill['priceUsd']);
    const notional = asNum(fill['notionalUsd']);
    const symbol = asStr(fill['symbol']) ?? '';
    if (qty !== undefined) parts.push(`${qty} ${symbol}`.trim());
    if (price !== undefined) parts.push(`at ${formatUsd(price)}`);
    if (notional !== undefined) parts.push(`(${formatUsd(notional)})`);
    const pnl = asNum(fill['realizedPnlUsd']);
    if (pnl !== undefined) parts.push(`P&L ${formatUsd(pnl)}`);
  }
  const order = asStr(o['orderId']);
  if (order) parts.push(`order ${order}`);
  const tx = asStr(o['txHash']);
  if (tx) parts.push(`tx ${tx.slice(0, 10)}…`);
  const err = asStr(o['errorCode']) ?? row.code;
  if (err) parts.push(err);
  if (o['shadow'] === true) parts.push('shadow');
  else if (o['simulated'] === true) parts.push('paper');
  return parts.join(' ') || row.decision;
}

function Rows({ rows, onTrace, caption }: { rows: readonly AuditRow[]; onTrace: (id: string) => void; caption: string }) {
  return (
    <TableScroll label={caption}>
      <table className="grid audit-all" data-testid="audit-rows">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">When (UTC)</th>
            <th scope="col">What</th>
            <th scope="col">From</th>
            <th scope="col">Decision</th>
            <th scope="col">Outcome</th>
            <th scope="col">Trace</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <th scope="row" className="when">{r.at.replace('T', ' ').slice(0, 19)}</th>
              <td>{r.kind && r.kind !== 'tool_call' ? `${r.kind}: ${r.toolName}` : r.toolName}</td>
              <td>{r.source}</td>
              <td>{r.decision}</td>
              <td className="outcome">{outcomeText(r)}</td>
              <td>
                {r.traceId ? (
                  <button type="button" className="link" onClick={() => onTrace(r.traceId!)} title={r.traceId}>
                    {r.traceId.slice(0, 12)}
                    <span className="visually-hidden"> (show this trace)</span>
                  </button>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** Download an export with the same credentials the page uses (a plain link could not send them). */
async function download(format: 'jsonl' | 'csv'): Promise<void> {
  const response = await fetch(apiUrl(`v1/audit?format=${format}`), { headers: authHeaders() });
  if (!response.ok) throw new Error(`export failed (${response.status})`);
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = `minara-audit.${format}`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

/**
 * The audit trail (`GET /v1/audit`): what the agent did for you, newest first, each call with its outcome; a trace
 * shows one run from its signal to each result; operators can verify the hash chain and see everyone's rows.
 */
export function AuditPage() {
  const [rows, setRows] = useState<readonly AuditRow[] | undefined>();
  const [tool, setTool] = useState('');
  const [everything, setEverything] = useState(false);
  const [trace, setTrace] = useState<{ id: string; rows: readonly AuditRow[] } | undefined>();
  const [verify, setVerify] = useState<VerifyReport | string | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const load = useCallback(async (toolName: string) => {
    try {
      const query = new URLSearchParams({ limit: '100', ...(toolName.trim() ? { tool: toolName.trim() } : {}) });
      setRows((await api<{ rows: AuditRow[] }>(`v1/audit?${query.toString()}`)).rows);
      setProblem(undefined);
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  }, []);
  useEffect(() => void load(''), [load]);
  const showTrace = async (id: string) => {
    try {
      setTrace({ id, rows: (await api<{ rows: AuditRow[] }>(`v1/audit/trace/${encodeURIComponent(id)}`)).rows });
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  };
  const runVerify = async () => {
    try {
      setVerify(await api<VerifyReport>('v1/audit/verify'));
    } catch (e) {
      setVerify(e instanceof ApiError && e.status === 403 ? 'Verifying the whole chain is for operators.' : e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <section aria-labelledby="audit-title">
      <div className="title-row">
        <h1 id="audit-title">Audit trail</h1>
        <button type="button" className="secondary" onClick={() => void download('jsonl').catch((e: unknown) => setProblem(String(e)))}>
          Export JSONL
        </button>
        <button type="button" className="secondary" onClick={() => void download('csv').catch((e: unknown) => setProblem(String(e)))}>
          Export CSV
        </button>
        <button type="button" onClick={() => void runVerify()} data-testid="audit-verify">
          Verify chain
        </button>
      </div>
      <p className="muted">What the agent did for you: what it asked, what you approved, what filled and what was refused. Rows are hash-chained: an edited or deleted row shows when the chain is verified.</p>
      {verify !== undefined ? (
        <p className={typeof verify === 'string' || !verify.ok ? 'error' : 'ok'} data-testid="audit-verify-result" role="status">
          {typeof verify === 'string'
            ? verify
            : verify.ok
              ? `The chain holds: ${verify.checked} ${verify.checked === 1 ? 'row' : 'rows'} checked${verify.head ? `; head #${verify.head.seq}, ${verify.head.hash.slice(0, 12)}…` : '.'}`
              : `The chain is broken: ${verify.problems.map((p) => p.message ?? p.kind).join('; ')}`}
        </p>
      ) : null}
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void load(tool);
        }}
      >
        <label>
          Tool <input value={tool} onChange={(e) => setTool(e.target.value)} placeholder="e.g. buy_token" />
        </label>
        <button type="submit" className="secondary">
          Filter
        </button>
        <label className="inline">
          <input type="checkbox" checked={everything} onChange={(e) => setEverything(e.target.checked)} data-testid="audit-everything" /> Show the engine's rows too
          (safety checks, skills, signals)
        </label>
      </form>
      {problem ? <div className="error">{problem}</div> : null}
      {trace ? (
        <div className="panel" data-testid="audit-trace">
          <div className="title-row">
            <h2>Trace {trace.id}</h2>
            <button type="button" className="secondary" onClick={() => setTrace(undefined)}>
              Close trace
            </button>
          </div>
          <Rows rows={trace.rows} onTrace={(id) => void showTrace(id)} caption={`What trace ${trace.id} did, oldest first`} />
        </div>
      ) : null}
      {rows === undefined ? (
        <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="empty" data-testid="audit-empty">
          Nothing yet: every tool call the agent makes (a price, a trade, a memory) is recorded here with what happened.
        </p>
      ) : everything ? (
        <Rows rows={rows} onTrace={(id) => void showTrace(id)} caption="Every audit row, newest first" />
      ) : (
        <PersonRows rows={rows.filter((r) => !isEngineRow(r))} onTrace={(id) => void showTrace(id)} />
      )}
    </section>
  );
}
