import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, onViewChanged } from './api';

interface Memory {
  readonly id: number;
  readonly category: string;
  readonly content: string;
  readonly source?: string;
  readonly updatedAt?: string;
}

const EDITABLE = 'user_manual';
/** What the extraction pass learned from your chats: you can forget it (not edit it). */
const LEARNED = 'chat_extracted';
const SOURCE_LABELS: Readonly<Record<string, string>> = {
  user_manual: 'written by you', chat_extracted: 'learned from chat', user_explicit: 'you asked to remember', learned_preference: 'learned from trades',
  inferred: 'inferred', agent_recorded: 'recorded by the agent', role_reflection: 'trade lesson', trade_case: 'trade case',
  proposed: 'held for your review: written after reading untrusted content',
};
/** Written by the agent after it read untrusted content: out of every prompt until you accept it. */
const HELD = 'proposed';
/** The source of a memory in words, with the raw source name after it. */
function sourceLabel(source: string | undefined): string {
  if (source === undefined) return '';
  const label = SOURCE_LABELS[source];
  return label === undefined ? source : `${label} (${source})`;
}

export function MemoryPage() {
  const [items, setItems] = useState<Memory[]>([]);
  const [query, setQuery] = useState('');
  const [category, setCategory] = useState('');
  const [draft, setDraft] = useState({ category: 'preference', content: '' });
  const [editing, setEditing] = useState<{ id: number; content: string } | undefined>();
  const [deleted, setDeleted] = useState<Memory[]>([]);
  const [message, setMessage] = useState<string | undefined>();

  const load = useCallback(async () => {
    const params = new URLSearchParams({ limit: '100' });
    if (query.trim()) params.set('q', query.trim());
    if (category.trim()) params.set('category', category.trim());
    try {
      setItems((await api<{ memories: Memory[] }>(`v1/memory?${params}`)).memories);
      setMessage(undefined);
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
  }, [query, category]);
  useEffect(() => void load(), [load]);
  useEffect(() => onViewChanged('memory', () => void load()), [load]);

  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      await load();
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
  };

  return (
    <section className="memory">
      <h1>Memory</h1>
      <form className="row" onSubmit={(e) => { e.preventDefault(); void load(); }}>
        <input aria-label="search" placeholder="Search (e.g. limit orders)" value={query} onChange={(e) => setQuery(e.target.value)} />
        <input aria-label="category" placeholder="category" value={category} onChange={(e) => setCategory(e.target.value)} />
        <button type="submit">Search</button>
      </form>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (!draft.content.trim()) return;
          void act(() => api('v1/memory', { method: 'POST', body: draft }).then(() => setDraft({ ...draft, content: '' })));
        }}
      >
        <input aria-label="new category" value={draft.category} onChange={(e) => setDraft({ ...draft, category: e.target.value })} />
        <input aria-label="new memory" placeholder="Something the agent should remember" value={draft.content} onChange={(e) => setDraft({ ...draft, content: e.target.value })} />
        <button type="submit">Add</button>
      </form>
      {message ? <div className="error">{message}</div> : null}
      {deleted.map((m) => (
        <div key={`d${m.id}`} className="notice">
          Deleted “{m.content}”.{' '}
          <button className="link" onClick={() => void act(() => api(`v1/memory/${m.id}/restore`, { method: 'POST' }).then(() => setDeleted((d) => d.filter((x) => x.id !== m.id))))}>
            Restore
          </button>
        </div>
      ))}
      {items.length === 0 && !message ? (
        <div className="empty" data-testid="memory-empty">
          {query.trim() || category.trim() ? (
            <p>No memory matches this search.</p>
          ) : (
            <>
              <p>No memories yet.</p>
              <p className="muted">
                Add one above (“Prefers limit orders over market orders”), or tell the agent in the chat (“remember that I only trade majors”): what it learns about you shows up here.
              </p>
            </>
          )}
        </div>
      ) : null}
      <ul className="items" data-testid="memories">
        {items.map((m) => (
          <li key={m.id}>
            <span className="tag">{m.category}</span>
            {editing?.id === m.id ? (
              <form onSubmit={(e) => { e.preventDefault(); void act(() => api(`v1/memory/${m.id}`, { method: 'PATCH', body: { content: editing.content } }).then(() => setEditing(undefined))); }}>
                <input aria-label="edit memory" value={editing.content} onChange={(e) => setEditing({ id: m.id, content: e.target.value })} autoFocus />
                <button type="submit">Save</button>
              </form>
            ) : (
              <span className="content">{m.content}</span>
            )}
            <span className="muted" title={m.source ? `source: ${m.source}` : undefined}>{sourceLabel(m.source)}</span>
            {m.source === EDITABLE && editing?.id !== m.id ? (
              <>
                <button className="link" onClick={() => setEditing({ id: m.id, content: m.content })}>Edit</button>
                <button className="link" onClick={() => void act(() => api(`v1/memory/${m.id}`, { method: 'DELETE' }).then(() => setDeleted((d) => [...d, m])))}>Delete</button>
              </>
            ) : m.source === LEARNED ? (
              <button className="link" onClick={() => void act(() => api(`v1/memory/${m.id}`, { method: 'DELETE' }).then(() => setDeleted((d) => [...d, m])))}>Forget</button>
            ) : m.source === HELD ? (
              <>
                <button className="link" onClick={() => void act(() => api(`v1/memory/${m.id}/accept`, { method: 'POST' }))}>Accept</button>
                <button className="link" onClick={() => void act(() => api(`v1/memory/${m.id}/reject`, { method: 'POST' }))}>Reject</button>
              </>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
