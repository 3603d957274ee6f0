import { type FormEvent, useCallback, useEffect, useId, useState } from 'react';
import { api, ApiError } from './api';
import { formatUsd } from './format';
import { TableScroll } from './ToolCards';

/** A grant as `GET /v1/grants` shows it. */
interface Grant {
  readonly id: string;
  readonly userId: string | null;
  readonly tools: readonly string[];
  readonly toolSets: readonly string[];
  readonly sources: readonly string[];
  readonly capPerCallUsd: number | null;
  readonly capPerDayUsd: number | null;
  readonly expiresAt: string | null;
  readonly status: 'active' | 'expired' | 'revoked';
  readonly spentTodayUsd: number;
  readonly leftTodayUsd: number | null;
  readonly note: string | null;
}
interface ToolSetState {
  readonly name: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly reason?: string | null;
  readonly by?: string | null;
}
interface Standing {
  readonly requestsPerMinute: { readonly limit: number | null; readonly used: number };
  readonly usdPerDay: { readonly limit: number | null; readonly spentUsd: number; readonly leftUsd: number | null };
}

const SOURCES = ['cron', 'heartbeat', 'webhook', 'workflow'] as const;
const money = (n: number | null) => (n === null ? '—' : formatUsd(n));

/** The create form: what the grant covers, from which sources, its caps and its expiry. */
function CreateGrant({ toolSets, onCreated }: { toolSets: readonly ToolSetState[]; onCreated: (message: string) => void }) {
  const id = useId();
  const [toolSet, setToolSet] = useState('trade');
  const [sources, setSources] = useState<string[]>(['cron']);
  const [perCall, setPerCall] = useState('50');
  const [perDay, setPerDay] = useState('200');
  const [days, setDays] = useState('7');
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      const expiresAt = new Date(Date.now() + Number(days) * 86_400_000).toISOString();
      const r = await api<{ grant: Grant }>('v1/grants', {
        method: 'POST',
        body: { toolSets: [toolSet], sources, capPerCallUsd: Number(perCall), capPerDayUsd: Number(perDay), expiresAt },
      });
      onCreated(`Created ${r.grant.id}: ${toolSet} from ${sources.join(', ') || 'any autonomous source'}, up to ${money(r.grant.capPerCallUsd)} a call and ${money(r.grant.capPerDayUsd)} a day.`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <form className="panel" onSubmit={(e) => void submit(e)} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New grant</h2>
      <p className="muted">A grant lets your scheduled and webhook runs use these tools without asking you, within its caps, until it expires.</p>
      <div className="form-grid">
        <label>
          Tool set
          <select value={toolSet} onChange={(e) => setToolSet(e.target.value)}>
            {toolSets.map((s) => <option key={s.name} value={s.name}>{s.name}</option>)}
          </select>
        </label>
        <label>
          Cap per call (USD)
          <input type="number" step="any" inputMode="decimal" value={perCall} onChange={(e) => setPerCall(e.target.value)} />
        </label>
        <label>
          Cap per day (USD)
          <input type="number" step="any" inputMode="decimal" value={perDay} onChange={(e) => setPerDay(e.target.value)} />
        </label>
        <label>
          Expires in (days)
          <input type="number" step="1" value={days} onChange={(e) => setDays(e.target.value)} />
        </label>
      </div>
      <fieldset>
        <legend>Runs it covers</legend>
        {SOURCES.map((s) => (
          <label key={s}>
            <input type="checkbox" checked={sources.includes(s)} onChange={(e) => setSources(e.target.checked ? [...sources, s] : sources.filter((x) => x !== s))} />
            {s}
          </label>
        ))}
      </fieldset>
      {error ? <p className="error" role="alert" data-testid="grant-error">{error}</p> : null}
      <div className="actions">
        <button type="submit">Create grant</button>
      </div>
    </form>
  );
}

/**
 * Grants, tool sets and usage: what autonomous runs may do without asking (each grant's caps and what it has left
 * today), which tool sets are turned on, and where you stand against your quotas.
 */
export function GrantsPage() {
  const [grants, setGrants] = useState<Grant[]>([]);
  const [toolSets, setToolSets] = useState<ToolSetState[]>([]);
  const [standing, setStanding] = useState<Standing | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const load = useCallback(async () => {
    try {
      const [g, c, u] = await Promise.all([
        api<{ grants: Grant[] }>('v1/grants'),
        api<{ toolSets: ToolSetState[] }>('v1/capabilities'),
        api<{ quota: Standing }>('v1/usage'),
      ]);
      setGrants(g.grants);
      setToolSets(c.toolSets);
      setStanding(u.quota);
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
  }, []);
  useEffect(() => void load(), [load]);
  const act = async (run: () => Promise<string>) => {
    try {
      setMessage(await run());
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
    await load();
  };
  const revoke = (g: Grant) => act(async () => {
    await api(`v1/grants/${encodeURIComponent(g.id)}`, { method: 'DELETE' });
    return `Revoked ${g.id}.`;
  });
  const toggle = (s: ToolSetState) => act(async () => {
    await api('v1/capabilities', { method: 'POST', body: { toolSet: s.name, enabled: !s.enabled } });
    return `Turned "${s.name}" ${s.enabled ? 'off' : 'on'}.`;
  });
  return (
    <section className="grants">
      <h1>Grants</h1>
      {message ? <div className="notice" role="status" data-testid="grants-message">{message}</div> : null}
      {grants.length === 0 ? (
        <div className="empty" data-testid="grants-empty">
          <p>No grants: scheduled and webhook runs ask before anything that needs your approval, and fund-moving tools do not run.</p>
        </div>
      ) : (
        <TableScroll label="grants">
          <table className="grid" data-testid="grants">
            <caption>Your grants</caption>
            <thead>
              <tr>
                <th scope="col">Covers</th>
                <th scope="col">Runs</th>
                <th scope="col" className="num">Per call</th>
                <th scope="col" className="num">Per day</th>
                <th scope="col" className="num">Left today</th>
                <th scope="col">Expires</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {grants.map((g) => (
                <tr key={g.id} className={`status-${g.status}`}>
                  <th scope="row" id={`grant-${g.id}`}>{[...g.toolSets.map((s) => `${s} (set)`), ...g.tools].join(', ')}</th>
                  <td>{g.sources.length ? g.sources.join(', ') : 'any'}</td>
                  <td className="num">{money(g.capPerCallUsd)}</td>
                  <td className="num">{money(g.capPerDayUsd)}</td>
                  <td className="num" data-testid="grant-left">{money(g.leftTodayUsd)}</td>
                  <td>{g.expiresAt ? new Date(g.expiresAt).toLocaleString() : 'never'}</td>
                  <td>
                    {g.status === 'active' ? (
                      <button type="button" className="secondary" onClick={() => void revoke(g)} aria-describedby={`grant-${g.id}`}>Revoke</button>
                    ) : (
                      <span className="muted">{g.status}</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <CreateGrant toolSets={toolSets.filter((s) => s.name !== 'read')} onCreated={(m) => void act(async () => m)} />

      <h2>Tool sets</h2>
      <p className="muted">A tool set turned off does not run for you at all, from a chat or on its own, until it is turned back on.</p>
      <ul className="items" data-testid="tool-sets">
        {toolSets.map((s) => (
          <li key={s.name}>
            <strong id={`set-${s.name}`}>{s.name}</strong> <span className="muted">{s.description}</span>
            <span className="tag">{s.enabled ? 'on' : `off${s.reason ? `: ${s.reason}` : ''}`}</span>
            <button type="button" className="secondary" onClick={() => void toggle(s)} aria-describedby={`set-${s.name}`}>
              {s.enabled ? 'Turn off' : 'Turn on'}
            </button>
          </li>
        ))}
      </ul>

      <h2>Usage today</h2>
      {standing ? (
        <dl className="facts" data-testid="usage-standing">
          <div>
            <dt>Chat turns this minute</dt>
            <dd>{standing.requestsPerMinute.used}{standing.requestsPerMinute.limit !== null ? ` of ${standing.requestsPerMinute.limit}` : ' (no limit)'}</dd>
          </div>
          <div>
            <dt>Spent on chat today</dt>
            <dd>{formatUsd(standing.usdPerDay.spentUsd)}{standing.usdPerDay.limit !== null ? ` of ${formatUsd(standing.usdPerDay.limit)}` : ' (no limit)'}</dd>
          </div>
        </dl>
      ) : null}
    </section>
  );
}
