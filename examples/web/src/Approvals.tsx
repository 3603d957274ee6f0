import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, onViewChanged } from './api';
import { ApprovalSummary, ProvenanceNote, RawJson } from './ToolCards';
import { splitProvenance } from './format';

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
  useEffect(() => onViewChanged('approvals', () => void load()), [load]);
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
      {items.length === 0 ? (
        <div className="empty">
          <p>Nothing is waiting for you.</p>
          <p className="muted">When the agent wants to place a trade or run another guarded tool, it shows up here and in the chat, with what it will do in numbers.</p>
        </div>
      ) : null}
      <ul className="items" data-testid="approvals">
        {items.map((a) => (
          <li key={a.id} aria-labelledby={`what-${a.id}`}>
            <code>{a.toolName}</code>
            <ApprovalSummary approvalId={a.id} toolName={a.toolName} input={a.input} headingId={`what-${a.id}`} />
            {splitProvenance(a.reason).sources ? <ProvenanceNote sources={splitProvenance(a.reason).sources!} passage={splitProvenance(a.reason).passage} /> : null}
            <div className="muted">
              {splitProvenance(a.reason).text} · from {a.source} · expires {new Date(a.expiresAt).toLocaleTimeString()}
            </div>
            <RawJson value={a.input} label="Arguments (JSON)" />
            <div className="actions">
              <button type="button" onClick={() => void decide(a.id, true)} aria-describedby={`what-${a.id}`}>Approve</button>
              <button type="button" className="secondary" onClick={() => void decide(a.id, false)} aria-describedby={`what-${a.id}`}>Deny</button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
