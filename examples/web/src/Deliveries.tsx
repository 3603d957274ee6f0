import { useCallback, useEffect, useState } from 'react';
import { api, type ServerInfo } from './api';

/** One answer the agent delivered by itself (heartbeat, a `## Schedule` entry, a webhook). */
interface Delivery {
  readonly sessionId: string;
  readonly source: string;
  readonly text: string;
  readonly at: string;
}

const SEEN_KEY = 'minara.deliveries.seen';
const POLL_MS = 30_000;

/**
 * The notification bell: polls `GET /v1/deliveries` (when the server has it) every 30 s and when the tab
 * regains focus; new answers since the last look show as a count; opening the list marks them seen.
 */
export function DeliveriesBell() {
  const [enabled, setEnabled] = useState(false);
  const [items, setItems] = useState<Delivery[]>([]);
  const [open, setOpen] = useState(false);
  const [seen, setSeen] = useState(() => localStorage.getItem(SEEN_KEY) ?? '');
  const poll = useCallback(async () => {
    try {
      setItems((await api<{ deliveries: Delivery[] }>('v1/deliveries?limit=20')).deliveries);
    } catch {
      // the bell stays quiet when the server is unreachable
    }
  }, []);
  useEffect(() => {
    api<ServerInfo>('v1/info').then((i) => setEnabled(i.features.deliveries === true), () => setEnabled(false));
  }, []);
  useEffect(() => {
    if (!enabled) return;
    void poll();
    const timer = setInterval(() => void poll(), POLL_MS);
    const onFocus = () => void poll();
    window.addEventListener('focus', onFocus);
    return () => {
      clearInterval(timer);
      window.removeEventListener('focus', onFocus);
    };
  }, [enabled, poll]);
  if (!enabled) return null;
  const unseen = items.filter((d) => d.at > seen).length;
  const toggle = () => {
    if (!open && items[0]) {
      localStorage.setItem(SEEN_KEY, items[0].at);
      setSeen(items[0].at);
    }
    setOpen(!open);
  };
  return (
    <span className="bell">
      <button className="link" aria-label={unseen > 0 ? `Updates ${unseen} new` : 'Updates'} onClick={toggle}>
        Updates{unseen > 0 ? <> <span className="badge">{unseen}</span></> : null}
      </button>
      {open ? (
        <div className="deliveries" role="dialog" aria-label="updates from the agent">
          {items.length === 0 ? <p className="muted">Nothing yet: the agent's scheduled work shows up here.</p> : null}
          {items.map((d) => (
            <a key={`${d.sessionId}-${d.at}`} href={`#/chat/${d.sessionId}`} className="delivery" onClick={() => setOpen(false)}>
              <span className="tag">{d.source}</span>
              <span className="muted">{new Date(d.at).toLocaleString()}</span>
              <div className="text">{d.text.length > 280 ? `${d.text.slice(0, 280)}…` : d.text}</div>
            </a>
          ))}
        </div>
      ) : null}
    </span>
  );
}
