import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from './api';

interface Approval {
  readonly id: string;
  readonly toolName: string;
  readonly reason: string;
  readonly input: unknown;
  readonly source: string;
  readonly sessionId: string | null;
  readonly expiresAt: string;
}

export function ApprovalsPage() {
  const [items, setItems] = useState<Approval[]>([]);
  const [message, setMessage] = useState<string | undefined>();
  const load = useCallback(async () => {
    try {
      setItems((await api<{ approvals: Approval[] }>('v1/approvals?status=pending')).approvals);
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
  }, []);
  useEffect(() => void load(), [load]);
  const decide = async (id: string, approved: boolean) => {
    try {
      const r = await api<{ turn: { text: string } | null }>(`v1/approvals/${id}`, { method: 'POST', body: { approved } });
      setMessage(`${approved ? 'Approved' : 'Denied'} ${id}.${r.turn?.text ? ` The agent answered: ${r.turn.text}` : ''}`);
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
    await load();
  };
  return (
    <section className="approvals">
      <h1>Approvals</h1>
      {message ? <div className="notice">{message}</div> : null}
      {items.length === 0 ? <p className="muted">Nothing is waiting for you.</p> : null}
      <ul className="items" data-testid="approvals">
        {items.map((a) => (
          <li key={a.id}>
            <code>{a.toolName}</code> <span className="content">{JSON.stringify(a.input)}</span>
            <div className="muted">
              {a.reason} · from {a.source} · expires {new Date(a.expiresAt).toLocaleTimeString()}
            </div>
            <button onClick={() => void decide(a.id, true)}>Approve</button>
            <button className="secondary" onClick={() => void decide(a.id, false)}>Deny</button>
          </li>
        ))}
      </ul>
    </section>
  );
}
