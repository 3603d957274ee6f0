import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from './api';

/** The caller's breaker as `GET /v1/breakers` returns it. */
interface Breaker {
  readonly userId: string;
  readonly tripped: boolean;
  readonly rule?: string;
  readonly reason?: string;
  readonly since?: string;
}

const POLL_MS = 15_000;

/**
 * The circuit-breaker banner: polls `GET /v1/breakers` every 15 s and on focus; while the caller's breaker is
 * tripped it says why and since when, and offers Reset to a person's credential (`canReset`: the decide
 * capability). Hidden when the breakers are off or not tripped.
 */
export function BreakerBanner() {
  const [own, setOwn] = useState<Breaker | undefined>();
  const [canReset, setCanReset] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const poll = useCallback(async () => {
    try {
      const r = await api<{ own: Breaker; canReset: boolean }>('v1/breakers');
      setOwn(r.own);
      setCanReset(r.canReset);
    } catch {
      setOwn(undefined); // off, or unreachable: no banner
    }
  }, []);
  useEffect(() => {
    void poll();
    const timer = setInterval(() => void poll(), POLL_MS);
    const onFocus = () => void poll();
    window.addEventListener('focus', onFocus);
    return () => {
      clearInterval(timer);
      window.removeEventListener('focus', onFocus);
    };
  }, [poll]);
  if (!own?.tripped) return null;
  const reset = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api(`v1/breakers/${encodeURIComponent(own.userId)}/reset`, { method: 'POST', body: { reason: 'reset in the web app' } });
      await poll();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="banner breaker" role="alert" aria-label="circuit breaker">
      <strong>Circuit breaker tripped</strong>: {own.reason ?? own.rule}
      {own.since ? <span className="muted"> · since {new Date(own.since).toLocaleString()}</span> : null}. Autonomous trades are halted.
      {canReset ? (
        <button onClick={() => void reset()} disabled={busy}>
          Reset
        </button>
      ) : (
        <span className="muted"> A person with the approvals credential can reset it.</span>
      )}
      {error ? <div className="error">{error}</div> : null}
    </div>
  );
}
