import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { getToken, setToken, takeLoginProof } from './api';
import { ApprovalsPage } from './Approvals';
import { AuditPage } from './Audit';
import { BacktestsPage } from './Backtests';
import { BreakerBanner } from './Breakers';
import { ChatPage } from './Chat';
import { DeliveriesBell } from './Deliveries';
import { GrantsPage } from './Grants';
import { StopBanner, StopButton, useStop } from './Stop';
import { MemoryPage } from './Memory';
import { PortfolioPage } from './Portfolio';
import { WorkspacePage } from './Workspace';
import './styles.css';

type Route = { page: 'chat'; chatId: string } | { page: 'portfolio' | 'memory' | 'workspace' | 'approvals' | 'grants' | 'audit' | 'backtests' };

function newChatId(): string {
  return `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Hash routes (`#/chat/<id>`, `#/memory`, …): no server fallback needed, and relative API paths keep working. */
function parseRoute(hash: string): Route {
  const [, page = 'chat', id] = hash.replace(/^#/, '').split('/');
  if (page === 'portfolio' || page === 'memory' || page === 'workspace' || page === 'approvals' || page === 'grants' || page === 'audit' || page === 'backtests') return { page };
  return { page: 'chat', chatId: id && /^[A-Za-z0-9._:-]{1,128}$/.test(id) ? id : '' };
}

function TokenPrompt({ onDone }: { onDone: () => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      className="panel"
      onSubmit={(e) => {
        e.preventDefault();
        setToken(value.trim() || undefined);
        onDone();
      }}
    >
      <h2>This gateway needs a token</h2>
      <p>Paste the gateway's token (GATEWAY_AUTH_TOKEN) or your user token. It stays in this browser.</p>
      <input aria-label="token" type="password" value={value} onChange={(e) => setValue(e.target.value)} autoFocus />
      <button type="submit">Save</button>
    </form>
  );
}

function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [needToken, setNeedToken] = useState(false);
  const [, setTick] = useState(0);
  const stop = useStop();
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    const onUnauthorized = () => setNeedToken(true);
    window.addEventListener('hashchange', onHash);
    window.addEventListener('minara:unauthorized', onUnauthorized);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('minara:unauthorized', onUnauthorized);
    };
  }, []);
  useEffect(() => {
    if (route.page === 'chat' && route.chatId === '') location.replace(`#/chat/${newChatId()}`);
  }, [route]);

  const link = (page: string, label: string) => (
    <a href={page === 'chat' ? `#/chat/${newChatId()}` : `#/${page}`} className={route.page === page ? 'active' : ''} {...(route.page === page ? { 'aria-current': 'page' as const } : {})}>
      {label}
    </a>
  );
  return (
    <div className="app">
      <a className="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <nav aria-label="main">
        <strong>Minara</strong>
        {link('chat', 'New chat')}
        {link('portfolio', 'Portfolio')}
        {link('memory', 'Memory')}
        {link('workspace', 'Workspace')}
        {link('approvals', 'Approvals')}
        {link('grants', 'Grants')}
        {link('audit', 'Audit')}
        {link('backtests', 'Backtests')}
        <DeliveriesBell />
        <StopButton stop={stop} />
        {getToken() ? (
          <button className="link" onClick={() => { setToken(undefined); setTick((t) => t + 1); }}>
            Forget token
          </button>
        ) : null}
      </nav>
      <StopBanner stop={stop} />
      <BreakerBanner />
      <main id="main" tabIndex={-1}>
        {needToken ? (
          <TokenPrompt onDone={() => { setNeedToken(false); setTick((t) => t + 1); }} />
        ) : route.page === 'chat' ? (
          route.chatId ? <ChatPage key={route.chatId} chatId={route.chatId} /> : null
        ) : route.page === 'portfolio' ? (
          <PortfolioPage />
        ) : route.page === 'memory' ? (
          <MemoryPage />
        ) : route.page === 'workspace' ? (
          <WorkspacePage />
        ) : route.page === 'grants' ? (
          <GrantsPage />
        ) : route.page === 'audit' ? (
          <AuditPage />
        ) : route.page === 'backtests' ? (
          <BacktestsPage />
        ) : (
          <ApprovalsPage />
        )}
      </main>
    </div>
  );
}

// Before the router reads location.hash: the login's proof arrives in it.
takeLoginProof();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
