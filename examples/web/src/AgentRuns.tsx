import { useEffect, useState } from 'react';
import { api } from './api';

/** One agent run as `GET /v1/backtests/runs` lists it. */
interface AgentRunSummary {
  readonly id: string;
  readonly strategy: string | null;
  readonly symbols: readonly string[];
  readonly start: string | null;
  readonly end: string | null;
  readonly model: string | null;
  readonly decisions: number | null;
  readonly metrics: Readonly<Record<string, number | string | null>>;
}

interface Fill {
  readonly orderId: string;
  readonly symbol: string;
  readonly side: string;
  readonly status: string;
  readonly quantity: number | null;
  readonly time: string | null;
  readonly price: number | null;
  readonly feeUsd: number | null;
  readonly realizedPnlUsd: number | null;
  readonly reason: string;
}

/** One decision as `GET /v1/backtests/runs/:run/decisions` answers. */
interface Decision {
  readonly decision: number;
  readonly time: string;
  readonly message: string;
  readonly context: { readonly sha256: string; readonly chars: number | null } | null;
  readonly saw: ReadonlyArray<{ readonly tool: string; readonly ok: boolean; readonly output: unknown }>;
  readonly said: string;
  readonly did: ReadonlyArray<{ readonly tool: string; readonly input: unknown }>;
  readonly gate: ReadonlyArray<{ readonly tool: string; readonly decision: string; readonly rule: string; readonly reason: string }>;
  readonly intents: ReadonlyArray<{ readonly symbol?: string; readonly side?: string; readonly notionalUsd?: number; readonly quantity?: number }>;
  readonly fills: readonly Fill[];
  readonly stopReason: string | null;
  readonly costUsd: number | string | null;
}

interface DecisionsPage {
  readonly run: AgentRunSummary & { readonly prompt: string; readonly contamination: { readonly trainingCutoff?: string; readonly overlap?: boolean; readonly note?: string } | null; readonly disabledTools: ReadonlyArray<{ readonly name: string; readonly reason: string }> };
  readonly total: number;
  readonly offset: number;
  readonly limit: number;
  readonly next: number | null;
  readonly decisions: readonly Decision[];
  /** System prompts by sha256 (what each decision's model was given before the message). */
  readonly prompts: Readonly<Record<string, string>>;
}

const PAGE_SIZE = 10;
const when = (iso: string | null) => (iso ? iso.replace('T', ' ').slice(0, 16) : '—');
const pct = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? `${(v * 100).toFixed(2)} %` : '—');
const usd = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? `$${v.toFixed(2)}` : v === 'unpriced' ? 'unpriced' : '—');
const short = (v: unknown) => {
  const text = JSON.stringify(v) ?? '';
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
};

/** A tool's name as the model used it (a call through tool_invoke names the inner tool). */
const toolOf = (tool: string, input: unknown) => (tool === 'tool_invoke' && typeof input === 'object' && input !== null && typeof (input as { name?: unknown }).name === 'string' ? `${(input as { name: string }).name} (via tool_invoke)` : tool);

function DecisionCard({ d, prompt }: { d: Decision; prompt: string | undefined }) {
  return (
    <article className="decision panel" data-testid="agent-decision" aria-labelledby={`decision-${d.decision}`}>
      <h4 id={`decision-${d.decision}`}>
        Decision {d.decision} · {when(d.time)} UTC
      </h4>
      <dl className="facts">
        <div className="wide">
          <dt>Told</dt>
          <dd>
            <pre className="text">{d.message}</pre>
          </dd>
        </div>
        <div className="wide">
          <dt>Context</dt>
          <dd>
            {d.context ? (
              <details className="raw" data-testid="decision-context">
                <summary>System prompt ({d.context.chars ?? '?'} characters: instructions, workspace, memory and what was learned by then)</summary>
                {/* A scrolling region: focusable so a keyboard can scroll it. */}
                <pre tabIndex={0} aria-label={`system prompt of decision ${d.decision}`}>
                  {prompt ?? 'not served (the run’s system_prompts.jsonl is missing or too large)'}
                </pre>
              </details>
            ) : (
              'not recorded for this run'
            )}
          </dd>
        </div>
        <div className="wide">
          <dt>Saw ({d.saw.length} tool results)</dt>
          <dd>
            {d.saw.length === 0 ? 'nothing' : null}
            {d.saw.map((s, i) => (
              <details key={i} className="raw">
                <summary>
                  {s.tool}
                  {s.ok ? '' : ' (failed)'}: {short(s.output)}
                </summary>
                <pre tabIndex={0} aria-label={`${s.tool} result`}>
                  {JSON.stringify(s.output, null, 2)}
                </pre>
              </details>
            ))}
          </dd>
        </div>
        <div className="wide">
          <dt>Said</dt>
          <dd data-testid="decision-said">{d.said || '—'}</dd>
        </div>
        <div className="wide">
          <dt>Did</dt>
          <dd>
            {d.did.length === 0 ? 'no tool calls' : (
              <ul>
                {d.did.map((x, i) => (
                  <li key={i}>
                    <code>{toolOf(x.tool, x.input)}</code> {short(x.input)}
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </div>
        <div className="wide">
          <dt>Gate</dt>
          <dd data-testid="decision-gate">
            {d.gate.length === 0 ? 'no order reached the gate' : (
              <ul>
                {d.gate.map((g, i) => (
                  <li key={i} className={g.decision === 'approved' ? 'pos' : 'neg'}>
                    {g.tool}: <strong>{g.decision === 'approved' ? 'allowed' : g.decision}</strong> ({g.rule}) — {g.reason}
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </div>
        <div className="wide">
          <dt>Orders and fills</dt>
          <dd data-testid="decision-fills">
            {d.intents.length === 0 && d.fills.length === 0 ? 'none' : null}
            {d.intents.length > 0 ? (
              <ul>
                {d.intents.map((o, i) => (
                  <li key={i}>
                    order: {o.side} {o.symbol} {o.notionalUsd !== undefined ? usd(o.notionalUsd) : `${String(o.quantity)} units`}
                  </li>
                ))}
              </ul>
            ) : null}
            {d.fills.length > 0 ? (
              <div className="table-scroll">
                <table className="grid">
                  <caption className="visually-hidden">Engine fills of decision {d.decision}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Side</th>
                      <th scope="col">Status</th>
                      <th scope="col">Time</th>
                      <th scope="col">Quantity</th>
                      <th scope="col">Price</th>
                      <th scope="col">Fee</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.fills.map((f) => (
                      <tr key={f.orderId}>
                        <td>
                          {f.side} {f.symbol}
                        </td>
                        <td>{f.status === 'rejected' ? `rejected: ${f.reason}` : f.status}</td>
                        <td>{when(f.time)}</td>
                        <td>{f.quantity?.toFixed(6) ?? '—'}</td>
                        <td>{f.price?.toFixed(4) ?? '—'}</td>
                        <td>{usd(f.feeUsd)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Model cost</dt>
          <dd>{usd(d.costUsd)}</dd>
        </div>
        <div>
          <dt>Stop reason</dt>
          <dd>{d.stopReason ?? '—'}</dd>
        </div>
      </dl>
    </article>
  );
}

/** One agent run's decisions, a page at a time, under its contamination statement and the tools that were off. */
function RunDecisions({ id }: { id: string }) {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<DecisionsPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    api<DecisionsPage>(`v1/backtests/runs/${encodeURIComponent(id)}/decisions?offset=${offset}&limit=${PAGE_SIZE}`).then(
      (p) => live && (setPage(p), setError(undefined)),
      (e: unknown) => live && setError(e instanceof Error ? e.message : 'error'),
    );
    return () => {
      live = false;
    };
  }, [id, offset]);
  if (error) return <p className="error">The decisions could not be loaded: {error}</p>;
  if (!page) return <p className="muted">Loading…</p>;
  const c = page.run.contamination;
  return (
    <section data-testid="agent-run" aria-label={`decisions of ${id}`}>
      <h3>
        {id}: {page.run.model ?? 'agent'} on {page.run.symbols.join(', ')}
      </h3>
      <p className="muted">
        {when(page.run.start)} → {when(page.run.end)} · total return {pct(page.run.metrics.totalReturn)} · model cost {usd(page.run.metrics.llmCostUsd)}
      </p>
      {page.run.prompt ? <p>Prompt: “{page.run.prompt}”</p> : null}
      {c ? (
        <p className={c.overlap ? 'panel warn' : 'muted'} data-testid="contamination">
          Training cutoff {c.trainingCutoff ?? 'unknown'}
          {c.overlap ? ': the test window overlaps what the model may have memorised.' : '.'} {c.note ?? ''}
        </p>
      ) : null}
      <details className="raw">
        <summary>Disabled for the run ({page.run.disabledTools.length})</summary>
        <ul>
          {page.run.disabledTools.map((t) => (
            <li key={t.name}>
              <strong>{t.name}</strong>: {t.reason}
            </li>
          ))}
        </ul>
      </details>
      {page.decisions.map((d) => (
        <DecisionCard key={d.decision} d={d} prompt={d.context ? page.prompts[d.context.sha256] : undefined} />
      ))}
      <div className="actions" role="group" aria-label="decision pages">
        <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
          Previous
        </button>
        <span className="muted">
          Decisions {page.total === 0 ? 0 : offset + 1}–{Math.min(offset + page.limit, page.total)} of {page.total}
        </span>
        <button disabled={page.next === null} onClick={() => page.next !== null && setOffset(page.next)}>
          Next
        </button>
      </div>
    </section>
  );
}

/**
 * Agent backtest runs (`minara backtest run --strategy agent`, served from the gateway's run folders): pick one to
 * see its decisions bar by bar — what the model was told and saw (tool results), what it said and did, what the
 * gate decided, and the engine's fills.
 */
export function AgentRuns() {
  const [runs, setRuns] = useState<readonly AgentRunSummary[] | undefined>();
  const [note, setNote] = useState<string | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    // Only when GET /v1/info says the gateway serves run folders: elsewhere the route does not exist.
    api<{ features?: { backtestRuns?: boolean } }>('v1/info')
      .then((info) => (info.features?.backtestRuns ? api<{ runs: AgentRunSummary[] }>('v1/backtests/runs') : undefined))
      .then(
        (r) => {
          if (!live) return;
          if (!r) return setNote('This gateway does not serve agent runs (start it with GATEWAY_BACKTEST_RUNS_DIR set).');
          setRuns(r.runs);
          setSelected((s) => s ?? r.runs[0]?.id);
        },
        (e: unknown) => live && setNote(`Agent runs could not be loaded: ${e instanceof Error ? e.message : 'error'}`),
      );
    return () => {
      live = false;
    };
  }, []);
  return (
    <section aria-labelledby="agent-runs-title">
      <h2 id="agent-runs-title">Agent runs</h2>
      {note ? <p className="muted">{note}</p> : null}
      {runs?.length === 0 ? (
        <p className="muted">
          No agent runs yet. Run <code>minara backtest run --strategy agent --out &lt;runs dir&gt;/&lt;your user&gt;/&lt;name&gt;</code>.
        </p>
      ) : null}
      {runs && runs.length > 0 ? (
        <ul className="backtest-runs" aria-label="agent runs">
          {runs.map((r) => (
            <li key={r.id}>
              <button className={r.id === selected ? 'link active' : 'link'} aria-pressed={r.id === selected} onClick={() => setSelected(r.id)}>
                {r.id}
              </button>{' '}
              <span className="muted">
                {r.model ?? 'agent'} · {r.symbols.join(', ')} · {when(r.start)} → {when(r.end)} · {r.decisions ?? '?'} decisions
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      {selected ? <RunDecisions key={selected} id={selected} /> : null}
    </section>
  );
}
