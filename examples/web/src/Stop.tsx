import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from './api';

/** One stop's state as `GET /v1/stop` reports it. */
interface StopStatus {
  readonly engaged: boolean;
  readonly reason?: string;
  readonly since?: string;
}
/** The polled state and a way to read it again now. */
export interface StopHandle {
  readonly state: StopState | undefined;
  reload(): Promise<void>;
}
interface StopState {
  readonly userId: string;
  readonly global: StopStatus;
  readonly user: StopStatus;
  readonly applies: boolean;
}

const POLL_MS = 10_000;
const CHANGED = 'minara:stop-changed';

/** The stop's state, polled (and re-read when the tab regains focus or a stop button changed it). */
export function useStop(): StopHandle {
  const [state, setState] = useState<StopState | undefined>();
  const reload = useCallback(async () => {
    try {
      setState(await api<StopState>('v1/stop'));
    } catch {
      // The banner stays as it was when the server cannot be reached.
    }
  }, []);
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), POLL_MS);
    const again = () => void reload();
    window.addEventListener('focus', again);
    window.addEventListener(CHANGED, again);
    return () => {
      clearInterval(timer);
      window.removeEventListener('focus', again);
      window.removeEventListener(CHANGED, again);
    };
  }, [reload]);
  return { state, reload };
}

const since = (s: StopStatus) => (s.since ? ` since ${new Date(s.since).toLocaleString()}` : '');

/**
 * The stop button, always in the navigation: it engages your own stop at once (nothing above read-only runs,
 * autonomous runs are skipped), in every process sharing the database. While a stop applies it reads "Stopped".
 */
export function StopButton({ stop: handle }: { stop: StopHandle }) {
  const { state } = handle;
  const [busy, setBusy] = useState(false);
  const engaged = state?.applies === true;
  const engage = async () => {
    setBusy(true);
    try {
      await api('v1/stop', { method: 'POST', body: { action: 'engage', scope: 'user', reason: 'stopped from the web app' } });
    } catch {
      // The banner shows the state either way.
    } finally {
      setBusy(false);
      window.dispatchEvent(new Event(CHANGED));
    }
  };
  return (
    <button type="button" className={`stop${engaged ? ' engaged' : ''}`} onClick={() => void engage()} disabled={busy || state?.user.engaged === true} data-testid="stop-button" aria-describedby="stop-help">
      {engaged ? 'Stopped' : 'Stop agent'}
      <span id="stop-help" className="visually-hidden">Engages your emergency stop: only read-only tools run and autonomous runs are skipped until it is released.</span>
    </button>
  );
}

/** The banner with the stop's state (yours and the operator's global one), and the release button. */
export function StopBanner({ stop: handle }: { stop: StopHandle }) {
  const { state, reload } = handle;
  const [message, setMessage] = useState<string | undefined>();
  if (!state?.applies) return null;
  const release = async (scope: 'user' | 'global') => {
    try {
      await api('v1/stop', { method: 'POST', body: { action: 'release', scope } });
      setMessage(undefined);
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
    await reload();
    window.dispatchEvent(new Event(CHANGED));
  };
  return (
    <div className="stop-banner" role="status" data-testid="stop-banner">
      {state.global.engaged ? (
        <p>
          <strong>Every agent is stopped</strong>{since(state.global)}{state.global.reason ? `: ${state.global.reason}` : ''}. Only read-only tools run; autonomous runs are skipped.
          <button type="button" className="secondary" onClick={() => void release('global')}>Release the global stop</button>
        </p>
      ) : null}
      {state.user.engaged ? (
        <p>
          <strong>Your agent is stopped</strong>{since(state.user)}{state.user.reason ? `: ${state.user.reason}` : ''}. Only read-only tools run; autonomous runs are skipped.
          <button type="button" className="secondary" onClick={() => void release('user')}>Release my stop</button>
        </p>
      ) : null}
      {message ? <p className="error">{message}</p> : null}
    </div>
  );
}
