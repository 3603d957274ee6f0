import { useEffect, useState } from 'react';
import { AgentRuns } from './AgentRuns';
import { api } from './api';
import { ArtifactFrame } from './Chat';
import { Markdown } from './Markdown';

/** One run as `GET /v1/backtests` answers. */
interface BacktestRun {
  readonly id: string;
  readonly uri: string;
  readonly title: string;
  readonly createdAt: string;
  readonly markdown: string;
  readonly chartId?: string;
}

/**
 * The Backtests page: the runs the agent made with `run_backtest` (ask it "backtest sma-cross on a crash"),
 * newest first; the selected run's equity chart (the artifact viewer in a sandboxed frame) and metrics table; then
 * the agent runs the gateway serves (`backtestRuns`), each decision bar by bar.
 */
export function BacktestsPage() {
  const [runs, setRuns] = useState<readonly BacktestRun[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    api<{ runs: BacktestRun[] }>('v1/backtests').then(
      (r) => {
        if (!live) return;
        setRuns(r.runs);
        setSelected((s) => s ?? r.runs[0]?.id);
      },
      (e: unknown) => live && setError(e instanceof Error ? e.message : 'error'),
    );
    return () => {
      live = false;
    };
  }, []);
  const run = runs?.find((r) => r.id === selected);
  return (
    <section className="panel">
      <h1>Backtests</h1>
      {error ? <p className="error">Backtests could not be loaded: {error}</p> : null}
      {runs === undefined && !error ? <p className="muted">Loading…</p> : null}
      {runs?.length === 0 ? (
        <p className="muted">No backtests yet. Ask the agent, for example “backtest sma-cross on a crash regime”, or run <code>minara backtest run --synthetic</code>.</p>
      ) : null}
      {runs && runs.length > 0 ? (
        <ul className="backtest-runs" aria-label="backtest runs">
          {runs.map((r) => (
            <li key={r.id}>
              <button className={r.id === selected ? 'link active' : 'link'} aria-pressed={r.id === selected} onClick={() => setSelected(r.id)}>
                {r.title}
              </button>{' '}
              <span className="muted">{new Date(r.createdAt).toLocaleString()}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {run ? (
        <article data-testid="backtest-run" aria-label={run.title}>
          <h2>{run.title}</h2>
          {run.chartId ? <ArtifactFrame key={run.chartId} id={run.chartId} /> : null}
          <Markdown text={run.markdown.replace(/\bchart:\/\/x-[a-z0-9]+\s*/g, '')} />
        </article>
      ) : null}
      <AgentRuns />
    </section>
  );
}
