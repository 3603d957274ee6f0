/**
 * Consent only its person can give (issue 37, part 2): a gateway without authentication (`minara serve` on
 * loopback) lets a caller decide only with the HttpOnly, SameSite=Strict cookie the one-time URL it printed sets,
 * plus the proof its redirect hands the page in the URL's fragment (the cookie also reaches every other port of
 * localhost). A script or another account on the machine that fetches the page gets nothing it can decide with.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody, type Harness, startGateway, waitFor } from './helpers';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A token-less gateway serving a web app, with a pending MANUAL_ONLY withdrawal. */
async function withPendingWithdrawal(gateway: { basePath?: string } = {}) {
  const web = mkdtempSync(path.join(tmpdir(), 'minara-local-login-web-'));
  mkdirSync(path.join(web, 'assets'));
  writeFileSync(path.join(web, 'index.html'), '<!doctype html><html><head><title>x</title></head><body><div id="root"></div></body></html>');
  h = await startGateway(
    [{ toolCalls: [{ toolName: 'withdraw_funds', input: { asset: 'USDC', amountUsd: 5000, address: '0xattacker', confirm: true } }] }, { text: 'Waiting for you.' }],
    { withdraw: true, gateway: { trustUserHeader: false, web: { dir: web }, ...gateway } },
  );
  const pending = await fetch(`${h.url}${gateway.basePath ?? ''}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('s-1', 'withdraw 5000 USDC')) });
  expect(pending.status).toBe(200);
  await pending.text();
  const [approval] = await h.tools.approvals.list({ status: 'pending' });
  if (!approval) throw new Error('no pending approval was created');
  expect(approval.toolName).toBe('withdraw_funds');
  return approval;
}

const decide = (id: string, headers: Record<string, string> = {}) =>
  fetch(`${h!.url}/v1/approvals/${id}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ approved: true }) });

/** The `name=value` of a Set-Cookie header. */
const cookiePair = (setCookie: string) => setCookie.split(';')[0]!.trim();
/** The proof a login redirect carries in its fragment (`/#minara-proof=…`). */
const proofOf = (location: string | null) => /#minara-proof=([A-Za-z0-9_-]+)$/.exec(location ?? '')?.[1] ?? '';
/** What the app sends once it opened the link: the cookie, and the proof in its header. */
const asApp = (r: Response): { cookie: string; 'x-minara-proof': string } => ({ cookie: cookiePair(r.headers.get('set-cookie')!), 'x-minara-proof': proofOf(r.headers.get('location')) });

describe('token-less gateway: deciding needs the cookie of the one-time URL', () => {
  it('a script that fetches / and takes whatever the page carries cannot approve a pending MANUAL_ONLY withdrawal', async () => {
    const approval = await withPendingWithdrawal();
    const page = await fetch(`${h!.url}/`);
    const html = await page.text();
    expect(page.status).toBe(200);
    // GET / grants nothing: no key in the page, no cookie.
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(html).not.toMatch(/minara-local-key/);
    const stolen = /<meta name="minara-local-key" content="([^"]+)">/.exec(html)?.[1] ?? '';
    for (const headers of [{}, { 'x-minara-local-key': stolen }, { 'x-minara-request': '1' }]) {
      const r = await decide(approval.id, headers);
      expect(r.status).toBe(403);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/printed by minara serve/);
    }
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    expect(h!.ledger).toEqual([]);
    const info = (await (await fetch(`${h!.url}/v1/info`)).json()) as { identity: { canDecide: boolean } };
    expect(info.identity.canDecide).toBe(false);
  });

  it('the one-time URL sets an HttpOnly SameSite=Strict cookie, redirects without the token with a proof in the fragment, and the two decide', async () => {
    const approval = await withPendingWithdrawal();
    const login = h!.gateway.localLoginPath();
    expect(login).toMatch(/^\/login\?token=[A-Za-z0-9_-]{40,}$/);
    const r = await fetch(`${h!.url}${login}`, { redirect: 'manual' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toMatch(/^\/#minara-proof=[A-Za-z0-9_-]{40,}$/);
    const proof = proofOf(r.headers.get('location'));
    expect(r.headers.get('cache-control')).toBe('no-store');
    const setCookie = r.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    const cookie = cookiePair(setCookie);
    expect(cookie).toMatch(new RegExp(`^minara_local_${new URL(h!.url).port}=`));
    // The cookie is not the token (the token in the terminal's scrollback is spent).
    expect(cookie.split('=')[1]).not.toBe(login!.split('token=')[1]);
    expect(proof).not.toBe(cookie.split('=')[1]);
    const info = (await (await fetch(`${h!.url}/v1/info`, { headers: { cookie, 'x-minara-proof': proof } })).json()) as { identity: { canDecide: boolean } };
    expect(info.identity.canDecide).toBe(true);
    // A forged cookie decides nothing, with the right proof or without.
    const forged = `${cookie.slice(0, -1)}${cookie.endsWith('A') ? 'B' : 'A'}`;
    expect((await decide(approval.id, { cookie: forged, 'x-minara-proof': proof })).status).toBe(403);
    expect((await decide(approval.id, { cookie, 'x-minara-proof': proof })).status).toBe(200);
    await waitFor(() => h!.ledger.length > 0);
    expect(h!.ledger).toEqual(['withdraw:USDC:5000:0xattacker']);
  });

  it('the token is single-use: a second visit (another process replaying it) gets no cookie', async () => {
    const approval = await withPendingWithdrawal();
    const login = h!.gateway.localLoginPath()!;
    const first = await fetch(`${h!.url}${login}`, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const again = await fetch(`${h!.url}${login}`, { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toMatch(/already used/);
    // A guessed token is refused the same way.
    const guessed = await fetch(`${h!.url}/login?token=${'A'.repeat(43)}`, { redirect: 'manual' });
    expect(guessed.status).toBe(403);
    expect(guessed.headers.get('set-cookie')).toBeNull();
    expect((await decide(approval.id)).status).toBe(403);
    // The browser that holds the cookie and opens the link again is simply sent to the app, with no new proof.
    const cookie = cookiePair(first.headers.get('set-cookie')!);
    const revisit = await fetch(`${h!.url}${login}`, { redirect: 'manual', headers: { cookie } });
    expect(revisit.status).toBe(303);
    expect(revisit.headers.get('location')).toBe('/');
    expect(revisit.headers.get('set-cookie')).toBeNull();
    // Each call mints a new token; each works once.
    const second = h!.gateway.localLoginPath()!;
    expect(second).not.toBe(login);
    expect((await fetch(`${h!.url}${second}`, { redirect: 'manual' })).status).toBe(303);
  });

  // The attack: browsers send a `localhost` cookie to every port of it, so any other local server the person's
  // browser visits (a dev server, another user's) receives the session cookie, and can replay it with any headers.
  it('another local server that received the cookie cannot decide with it: the proof never leaves the page', async () => {
    const approval = await withPendingWithdrawal();
    const link = h!.gateway.localLoginPath()!;
    const r = await fetch(`${h!.url}${link}`, { redirect: 'manual' });
    const { cookie, 'x-minara-proof': proof } = asApp(r);
    const port = new URL(h!.url).port;
    // What it could send: the cookie alone, with the headers the app sends, with a Host and Origin of ours, or with a
    // guessed, empty, overlong or another session's proof.
    const other = asApp(await fetch(`${h!.url}${h!.gateway.localLoginPath()!}`, { redirect: 'manual' }));
    const tries: Array<Record<string, string>> = [
      { cookie },
      { cookie, 'x-minara-request': '1', origin: h!.url, host: `127.0.0.1:${port}` },
      { cookie, 'x-minara-proof': '' },
      { cookie, 'x-minara-proof': 'A'.repeat(43) },
      { cookie, 'x-minara-proof': `${proof}A` },
      { cookie, 'x-minara-proof': proof.repeat(10) },
      { cookie, 'x-minara-proof': other['x-minara-proof'] },
    ];
    for (const headers of tries) {
      const res = await decide(approval.id, headers);
      expect(res.status, JSON.stringify(Object.keys(headers))).toBe(403);
    }
    // Opening the spent link again (what the browser's history holds) with the cookie gives no proof either.
    const again = await fetch(`${h!.url}${link}`, { redirect: 'manual', headers: { cookie } });
    expect(again.headers.get('location')).toBe('/');
    const info = (await (await fetch(`${h!.url}/v1/info`, { headers: { cookie } })).json()) as { identity: { canDecide: boolean } };
    expect(info.identity.canDecide).toBe(false);
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    expect(h!.ledger).toEqual([]);
    // The page that opened the link, with its own proof, decides.
    expect((await decide(approval.id, { cookie, 'x-minara-proof': proof })).status).toBe(200);
  });

  it('a browser that holds the cookie but lost its proof is signed in again by a fresh link (a new session and proof)', async () => {
    const approval = await withPendingWithdrawal();
    const first = asApp(await fetch(`${h!.url}${h!.gateway.localLoginPath()!}`, { redirect: 'manual' }));
    const fresh = await fetch(`${h!.url}${h!.gateway.localLoginPath()!}`, { redirect: 'manual', headers: { cookie: first.cookie } });
    expect(fresh.status).toBe(303);
    const again = asApp(fresh);
    expect(again.cookie).not.toBe(first.cookie);
    expect(again['x-minara-proof']).not.toBe(first['x-minara-proof']);
    // Each session's proof goes with its own cookie only.
    expect((await decide(approval.id, { cookie: first.cookie, 'x-minara-proof': again['x-minara-proof'] })).status).toBe(403);
    expect((await decide(approval.id, again)).status).toBe(200);
  });

  it('cross-site is still refused with the cookie (another site cannot ride the session)', async () => {
    const approval = await withPendingWithdrawal();
    const r = await fetch(`${h!.url}${h!.gateway.localLoginPath()!}`, { redirect: 'manual' });
    const app = asApp(r);
    const evil = await decide(approval.id, { ...app, origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as { error: { code: string } }).error.code).toBe('HTTP_CROSS_SITE');
    expect((await decide(approval.id, { ...app, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    expect(h!.ledger).toEqual([]);
  });

  it('under a basePath the login path, the redirect and the cookie path carry it', async () => {
    await withPendingWithdrawal({ basePath: '/api' });
    const login = h!.gateway.localLoginPath()!;
    expect(login).toMatch(/^\/api\/login\?token=/);
    const r = await fetch(`${h!.url}${login}`, { redirect: 'manual' });
    expect(r.headers.get('location')).toMatch(/^\/api\/#minara-proof=/);
    expect(r.headers.get('set-cookie')).toMatch(/Path=\/api\//);
  });

  it('a gateway with authentication has no local login', async () => {
    h = await startGateway([], { gateway: { authToken: 'test-token-0123456789abcdef', trustUserHeader: false } });
    expect(h.gateway.localLoginPath()).toBeUndefined();
    expect((await fetch(`${h.url}/login?token=x`, { headers: { authorization: 'Bearer test-token-0123456789abcdef' } })).status).toBe(404);
  });
});
