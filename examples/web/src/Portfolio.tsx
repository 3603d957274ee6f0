import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, onViewChanged } from './api';
import { asNum, formatSignedUsd, formatUsd, type Json } from './format';
import { PortfolioTable, TableScroll } from './ToolCards';

interface PortfolioAnswer {
  readonly portfolio: Json;
  readonly pnl: Json;
  /** Drawn by Vega on the server (the artifacts' chart stack); shown as an image, so it can run nothing. */
  readonly chart: { readonly svg: string; readonly description: string } | null;
}

function Stat({ label, value, tone }: { label: string; value: string; tone?: number | undefined }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className={`stat-value ${tone === undefined ? '' : tone < 0 ? 'neg' : tone > 0 ? 'pos' : ''}`}>{value}</div>
    </div>
  );
}

const money = (v: unknown) => (asNum(v) !== undefined ? formatUsd(asNum(v)!) : '—');
const signed = (v: unknown) => (asNum(v) !== undefined ? formatSignedUsd(asNum(v)!) : '—');

interface ShadowReportAnswer {
  readonly report: {
    /** `simulated`: shadow mode without a live adapter (offline, generated prices). */
    readonly market?: 'live' | 'simulated';
    readonly totals: { readonly fills: number; readonly notionalUsd: number; readonly markedPnlUsd: number; readonly agentValueUsd: number; readonly holdValueUsd: number; readonly edgeUsd: number };
    readonly byAsset: ReadonlyArray<{ readonly symbol: string; readonly fills: number; readonly firstPriceUsd: number; readonly currentPriceUsd?: number; readonly movePct?: number; readonly markedPnlUsd: number }>;
  };
}

/**
 * In shadow mode (`MINARA_TRADING_MODE=shadow`): what the agent would have done, against the market and against
 * holding (`GET /v1/finance/shadow`). Nothing shows in other modes (the route answers 404).
 */
function ShadowSection() {
  const [report, setReport] = useState<ShadowReportAnswer['report'] | undefined>();
  useEffect(() => {
    // Only in shadow mode (GET /v1/info says so): elsewhere the report route does not exist.
    api<{ features?: { shadow?: boolean } }>('v1/info')
      .then((info) => (info.features?.shadow ? api<ShadowReportAnswer>('v1/finance/shadow') : undefined))
      .then((r) => setReport(r?.report), () => setReport(undefined));
  }, []);
  if (!report) return null;
  const t = report.totals;
  return (
    <section className="panel" aria-labelledby="shadow-title" data-testid="shadow-report">
      <h2 id="shadow-title">Shadow mode{report.market === 'simulated' ? ' · simulated market' : ''}</h2>
      {report.market === 'simulated' ? (
        <p className="notice sim-label" data-testid="shadow-simulated">
          <strong>Simulated market, offline.</strong> These prices are generated, not real: a try-out of shadow mode that says nothing about how the agent
          would do on the real market. Set <code>MINARA_API_KEY</code> to shadow the live market.
        </p>
      ) : (
        <p className="muted">Orders went to a shadow book at live prices; nothing was traded for real.</p>
      )}
      <div className="stats">
        <Stat label="Shadow fills" value={String(t.fills)} />
        <Stat label="Marked P&L" value={formatSignedUsd(t.markedPnlUsd)} tone={t.markedPnlUsd} />
        <Stat label="Book now" value={formatUsd(t.agentValueUsd)} />
        <Stat label="Holding instead" value={formatUsd(t.holdValueUsd)} />
        <Stat label="Trading vs holding" value={formatSignedUsd(t.edgeUsd)} tone={t.edgeUsd} />
      </div>
      {report.byAsset.length > 0 ? (
        <TableScroll label="shadow fills by asset">
          <table className="grid">
            <caption>Shadow fills by asset</caption>
            <thead>
              <tr>
                <th scope="col">Asset</th>
                <th scope="col" className="num">Fills</th>
                <th scope="col" className="num">First price</th>
                <th scope="col" className="num">Now</th>
                <th scope="col" className="num">Marked P&amp;L</th>
              </tr>
            </thead>
            <tbody>
              {report.byAsset.map((a) => (
                <tr key={a.symbol}>
                  <th scope="row">{a.symbol}</th>
                  <td className="num">{a.fills}</td>
                  <td className="num">{formatUsd(a.firstPriceUsd)}</td>
                  <td className="num">{a.currentPriceUsd !== undefined ? formatUsd(a.currentPriceUsd) : '—'}</td>
                  <td className={`num ${a.markedPnlUsd < 0 ? 'neg' : 'pos'}`}>{formatSignedUsd(a.markedPnlUsd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
    </section>
  );
}

/** Portfolio and P&L from the finance pack's tools (`GET /v1/finance/portfolio`), with the allocation chart. */
export function PortfolioPage() {
  const [data, setData] = useState<PortfolioAnswer | undefined>();
  const [problem, setProblem] = useState<{ missing: boolean; message: string } | undefined>();
  const load = useCallback(async () => {
    try {
      setData(await api<PortfolioAnswer>('v1/finance/portfolio'));
      setProblem(undefined);
    } catch (e) {
      setProblem({ missing: e instanceof ApiError && e.status === 404, message: e instanceof Error ? e.message : String(e) });
    }
  }, []);
  useEffect(() => void load(), [load]);
  // Refresh when a trade fills (the server's live updates), not on a timer.
  useEffect(() => onViewChanged('portfolio', () => void load()), [load]);
  const p = data?.portfolio;
  const pnl = data?.pnl;
  const byDay = Array.isArray(pnl?.['byDay']) ? (pnl['byDay'] as Json[]) : [];
  return (
    <section className="portfolio" aria-labelledby="portfolio-title">
      <div className="title-row">
        <h1 id="portfolio-title">Portfolio</h1>
        <button type="button" className="secondary" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {problem ? (
        <div className={problem.missing ? 'empty' : 'error'} data-testid="portfolio-problem">
          {problem.missing ? (
            <>
              <p>This server has no trading tools.</p>
              <p className="muted">The finance pack (paper trading by default) provides the portfolio; `minara serve` adds it unless it was turned off.</p>
            </>
          ) : (
            problem.message
          )}
        </div>
      ) : null}
      {!data && !problem ? <p className="muted">Loading…</p> : null}
      {p && pnl ? (
        <>
          {p['simulated'] === true ? <p className="muted">Paper account: simulated prices, no real funds.</p> : null}
          <div className="stats" data-testid="portfolio-stats">
            <Stat label="Total value" value={money(p['totalValueUsd'])} />
            <Stat label="Exposure" value={money(p['exposureUsd'])} />
            <Stat label="Unrealised P&L" value={signed(pnl['unrealizedUsd'])} tone={asNum(pnl['unrealizedUsd'])} />
            <Stat label="Realised P&L" value={signed(pnl['realizedUsd'])} tone={asNum(pnl['realizedUsd'])} />
            <Stat label="Realised today" value={signed(pnl['realizedTodayUsd'])} tone={asNum(pnl['realizedTodayUsd'])} />
          </div>
          {data.chart ? (
            <figure className="chart">
              <img src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(data.chart.svg)}`} alt={data.chart.description} data-testid="portfolio-chart" />
            </figure>
          ) : (
            <p className="empty">Nothing held yet: buy something in the chat (“Buy $50 of ETH”) and it shows here.</p>
          )}
          <PortfolioTable data={p} caption={`Holdings · total ${money(p['totalValueUsd'])}`} />
          {byDay.length > 0 ? (
            <TableScroll label="realised P&L by day">
              <table className="grid">
                <caption>Realised P&amp;L by day</caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    <th scope="col" className="num">Realised</th>
                  </tr>
                </thead>
                <tbody>
                  {byDay.map((d) => (
                    <tr key={String(d['day'])}>
                      <th scope="row">{String(d['day'])}</th>
                      <td className={`num ${(asNum(d['realizedUsd']) ?? 0) < 0 ? 'neg' : 'pos'}`}>{signed(d['realizedUsd'])}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          ) : null}
        </>
      ) : null}
      <ShadowSection />
    </section>
  );
}
