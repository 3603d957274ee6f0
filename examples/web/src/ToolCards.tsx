import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { api } from './api';
import { asNum, asObj, asStr, describeOrder, describeToolResult, formatBps, formatPrice, formatSignedUsd, formatUnits, formatUsd, type Json, prettyJson, splitProvenance } from './format';

/** A wide table's frame: scrolls sideways on a phone, and can take the focus so the keyboard can scroll it. */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** A row of label → value in a card. */
/** Label/value pairs in a grid; `wide` labels (an order id) take a whole row, and no value is wider than its cell. */
function Facts({ rows, wide = [] }: { rows: ReadonlyArray<readonly [string, string | undefined]>; wide?: readonly string[] }) {
  const shown = rows.filter((r): r is readonly [string, string] => r[1] !== undefined && r[1] !== '');
  return (
    <dl className="facts">
      {shown.map(([k, v]) => (
        <div key={k} className={wide.includes(k) ? 'wide' : undefined}>
          <dt>{k}</dt>
          <dd className={k === 'Order' ? 'id' : undefined}>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

const usd = (v: unknown) => (asNum(v) !== undefined ? formatUsd(asNum(v)!) : undefined);
const price = (v: unknown) => (asNum(v) !== undefined ? formatPrice(asNum(v)!) : undefined);
const units = (v: unknown, symbol?: unknown) => (asNum(v) !== undefined ? `${formatUnits(asNum(v)!)}${asStr(symbol) ? ` ${asStr(symbol)}` : ''}` : undefined);
const bps = (v: unknown) => (asNum(v) !== undefined ? formatBps(asNum(v)!) : undefined);
const signed = (v: unknown) => (asNum(v) !== undefined ? formatSignedUsd(asNum(v)!) : undefined);
const pnlClass = (v: unknown) => ((asNum(v) ?? 0) < 0 ? 'neg' : (asNum(v) ?? 0) > 0 ? 'pos' : '');

export function PriceCard({ data }: { data: Json }) {
  const change = asNum(data['change24hPct']);
  return (
    <div className="card-body price-card">
      <span className="symbol">{asStr(data['symbol'])}</span>
      <span className="big">{price(data['priceUsd'])}</span>
      {change !== undefined ? <span className={change < 0 ? 'neg' : 'pos'}>{`${change >= 0 ? '▲ +' : '▼ '}${change.toFixed(2)}% 24h`}</span> : null}
      {data['simulated'] === true ? <span className="tag">simulated</span> : null}
    </div>
  );
}

/** The numbers of a fund-moving preview (spot, perp or transfer), and the limits it is judged against. */
export function OrderPreview({ data, input }: { data: Json; input: unknown }) {
  const i = asObj(input) ?? {};
  const limits = asObj(data['limits']);
  const grantLeft = asNum(data['grantLeftTodayUsd']);
  return (
    <div className="card-body">
      <Facts
        rows={[
          ['Asset', asStr(data['asset'])],
          ['Side', asStr(data['side'])],
          ['Notional', usd(data['sizeUsd'])],
          ['Route', asStr(data['route'])],
          ['You pay', units(data['amountIn'], data['from'])],
          ['You get (expected)', units(data['expectedOutput'], data['to'])],
          ['You get (at least)', units(data['minOutput'], data['to'])],
          ['Fill price (expected)', price(data['expectedFillPrice'])],
          ['Leverage', asNum(data['leverage']) !== undefined ? `${asNum(data['leverage'])}×` : undefined],
          ['Margin', usd(data['marginUsd'])],
          ['Liquidation', price(data['liquidationPrice'])],
          ['Expected P&L', signed(data['expectedPnlUsd'])],
          ['Fee', usd(data['feeUsd'])],
          ['Slippage (expected)', bps(data['slippageBps'])],
          ['Slippage (max)', bps(i['slippageBps'])],
          ['Limit per trade', usd(limits?.['maxTradeUsd'])],
          ['Max slippage allowed', bps(limits?.['maxSlippageBps'])],
          ['Grant left today', grantLeft !== undefined ? formatUsd(grantLeft) : undefined],
        ]}
      />
      {data['simulated'] === true ? <p className="muted">Paper trading: simulated prices, no real funds.</p> : null}
    </div>
  );
}

export function FillReceipt({ data }: { data: Json }) {
  const fill = asObj(data['fill']) ?? {};
  return (
    <div className="card-body receipt">
      <Facts
        rows={[
          ['Status', data['duplicate'] === true ? 'already filled earlier (nothing new placed)' : asStr(data['status'])],
          ['Side', asStr(fill['side'])],
          ['Quantity', units(fill['quantity'], fill['symbol'])],
          ['Price', price(fill['price'])],
          ['Notional', usd(fill['notionalUsd'])],
          ['Fee', usd(fill['feeUsd'])],
          ['Time', asStr(data['at']) ? new Date(asStr(data['at'])!).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : undefined],
          ['Order', asStr(data['orderId'])],
        ]}
        wide={['Time', 'Order']}
      />
      {data['simulated'] === true ? <p className="muted">Paper trade: simulated fill.</p> : null}
    </div>
  );
}

/** Holdings (and perp positions) as a table. */
export function PortfolioTable({ data, caption }: { data: Json; caption?: string }) {
  const holdings = Array.isArray(data['holdings']) ? (data['holdings'] as Json[]) : [];
  const positions = Array.isArray(data['positions']) ? (data['positions'] as Json[]) : [];
  return (
    <div className="card-body">
      <TableScroll label="holdings">
        <table className="grid">
          <caption>{caption ?? `Holdings · total ${usd(data['totalValueUsd']) ?? '—'}`}</caption>
          <thead>
            <tr>
              <th scope="col">Asset</th>
              <th scope="col" className="num">Amount</th>
              <th scope="col" className="num">Price</th>
              <th scope="col" className="num">Value</th>
              <th scope="col" className="num">Unrealised P&amp;L</th>
            </tr>
          </thead>
          <tbody>
            {holdings.map((h) => (
              <tr key={asStr(h['asset'])}>
                <th scope="row">{asStr(h['asset'])}</th>
                <td className="num">{units(h['amount'])}</td>
                <td className="num">{price(h['priceUsd'])}</td>
                <td className="num">{usd(h['valueUsd'])}</td>
                <td className={`num ${pnlClass(h['unrealizedPnlUsd'])}`}>{h['stable'] === true ? '—' : signed(h['unrealizedPnlUsd'])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {positions.length > 0 ? (
        <TableScroll label="perp positions">
          <table className="grid">
            <caption>Perp positions</caption>
            <thead>
              <tr>
                <th scope="col">Market</th>
                <th scope="col">Side</th>
                <th scope="col" className="num">Notional</th>
                <th scope="col" className="num">Entry</th>
                <th scope="col" className="num">Mark</th>
                <th scope="col" className="num">Liquidation</th>
                <th scope="col" className="num">Unrealised P&amp;L</th>
              </tr>
            </thead>
            <tbody>
              {positions.map((p) => (
                <tr key={`${asStr(p['symbol'])}-${asStr(p['side'])}`}>
                  <th scope="row">{asStr(p['symbol'])}</th>
                  <td>{`${asStr(p['side'])} ${asNum(p['leverage']) ?? ''}×`}</td>
                  <td className="num">{usd(p['notionalUsd'])}</td>
                  <td className="num">{price(p['entryPrice'])}</td>
                  <td className="num">{price(p['markPrice'])}</td>
                  <td className="num">{price(p['liquidationPrice'])}</td>
                  <td className={`num ${pnlClass(p['unrealizedPnlUsd'])}`}>{signed(p['unrealizedPnlUsd'])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
    </div>
  );
}

/** The readable body of a successful result: a known card, else the one-line description, else nothing (the raw JSON is below). */
export function ResultBody({ toolName, data, input }: { toolName: string; data: unknown; input: unknown }) {
  const d = asObj(data);
  if (!d) return null;
  if (d['preview'] === true) return <OrderPreview data={d} input={input} />;
  if (asObj(d['fill']) && typeof d['status'] === 'string') return <FillReceipt data={d} />;
  if (toolName === 'get_price' && asNum(d['priceUsd']) !== undefined) return <PriceCard data={d} />;
  if (toolName === 'get_portfolio' && Array.isArray(d['holdings'])) return <PortfolioTable data={d} />;
  return null;
}

/** A one-line headline of a result (the card's title line). */
export function resultHeadline(toolName: string, data: unknown, input: unknown): string | undefined {
  return describeToolResult({ toolName, data, input });
}

export function RawJson({ value, label = 'Raw JSON' }: { value: unknown; label?: string }) {
  return (
    <details className="raw">
      <summary>{label}</summary>
      <pre>{prettyJson(value)}</pre>
    </details>
  );
}

type PreviewAnswer = { approval: { toolName: string; input: unknown }; preview: Json | null };

/**
 * What an approval will do, in words and numbers, from the call's arguments and (once loaded) its preview
 * (`GET /v1/approvals/:id/preview`): the sentence, the preview's numbers, or why the checks would refuse it.
 */
export function ApprovalSummary({ approvalId, toolName, input, reason, headingId }: { approvalId: string; toolName: string; input: unknown; reason?: string | undefined; headingId: string }) {
  const [answer, setAnswer] = useState<PreviewAnswer | undefined>();
  useEffect(() => {
    let live = true;
    api<PreviewAnswer>(`v1/approvals/${encodeURIComponent(approvalId)}/preview`).then(
      (r) => live && setAnswer(r),
      () => live && setAnswer(undefined),
    );
    return () => {
      live = false;
    };
  }, [approvalId]);
  const preview = answer?.preview ?? undefined;
  const refused = preview && preview['ok'] === false ? preview : undefined;
  const sentence = describeOrder({ toolName, input, ...(preview && !refused ? { preview } : {}) });
  const why = splitProvenance(reason);
  return (
    <>
      <p className="what" id={headingId} data-testid="approval-sentence">
        {sentence ? `${sentence}.` : `Run ${toolName} with the arguments below.`}
      </p>
      {refused ? <p className="error">The safety checks would refuse this now: {asStr(refused['error'])}</p> : null}
      {preview && !refused ? <OrderPreview data={preview} input={input} /> : null}
      {why.sources ? <ProvenanceNote sources={why.sources} passage={why.passage} /> : null}
      {why.text ? <p className="muted">{why.text}</p> : null}
    </>
  );
}

/** What the agent had read before it proposed the call: untrusted sources, and the passage that reads as an instruction. */
export function ProvenanceNote({ sources, passage }: { sources: readonly string[]; passage?: string | undefined }) {
  return (
    <div className="provenance" role="note" data-testid="approval-provenance">
      <strong>Proposed after reading:</strong> {sources.join(', ')}
      {passage ? <blockquote data-testid="approval-passage">It read: “{passage}”</blockquote> : null}
      <span className="muted"> Check that this is what you asked for; text on a web page is not you.</span>
    </div>
  );
}

/** The approval block of a tool card: the summary, then Approve / Deny. Focus moves to it when it appears (not to a button). */
export function ApprovalBlock({ approvalId, toolName, input, reason, onAnswer }: { approvalId: string; toolName: string; input: unknown; reason?: string | undefined; onAnswer: (approved: boolean) => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const headingId = useId();
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <div className="approval" role="group" aria-labelledby={headingId} tabIndex={-1} ref={ref} data-testid="approval">
      <h3 className="approval-title">Approve this order?</h3>
      <ApprovalSummary approvalId={approvalId} toolName={toolName} input={input} reason={reason} headingId={headingId} />
      <div className="actions">
        <button type="button" onClick={() => onAnswer(true)} aria-describedby={headingId}>
          Approve
        </button>
        <button type="button" className="secondary" onClick={() => onAnswer(false)} aria-describedby={headingId}>
          Deny
        </button>
      </div>
    </div>
  );
}
