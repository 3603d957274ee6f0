import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * How a gateway without authentication (`minara serve` on loopback) knows a decision comes from the person who
 * started it, the way a notebook server does: the process prints a URL with a one-time token to its own terminal;
 * opening it sets an HttpOnly, SameSite=Strict cookie and redirects to the app without the token. Deciding needs
 * that cookie. `GET /` carries nothing, so a script or another account on the machine that fetches the page
 * holds nothing it can decide with; the token in the terminal's scrollback is spent once used; a page of another
 * site never gets the cookie sent (SameSite=Strict) and is refused by the perimeter anyway.
 *
 * Tokens and session values are 32 random bytes; both are compared in constant time (SHA-256 of each side,
 * `timingSafeEqual`), never looked up by value.
 */
export interface LocalLogin {
  /** Mint a one-time token: the path (under the base path) to open, `/login?token=…`. */
  issue(): string;
  /** Answer `GET <base>/login?token=…`: set the cookie and redirect (303) to `<base>/`, or refuse (403). */
  handle(request: Request, url: URL): Response;
  /** Whether the request carries a session cookie this login set. */
  holdsSession(request: Request, url: URL): boolean;
}

/** Unused tokens kept at most (each `issue()` adds one); the oldest is dropped past it. */
const MAX_TOKENS = 16;
/** Browser sessions kept at most; the oldest is dropped past it (its browser opens a fresh link). */
const MAX_SESSIONS = 32;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Index of the entry equal to `presented` (compared in constant time against every entry), or -1. */
function findIndex(entries: readonly Buffer[], presented: string): number {
  const actual = digest(presented);
  let found = -1;
  entries.forEach((expected, i) => {
    if (timingSafeEqual(expected, actual) && presented.length > 0) found = i;
  });
  return found;
}

/**
 * The cookie's name carries the port: browsers send a `localhost` cookie to every port of it, so two local
 * servers must not overwrite each other's.
 */
function cookieName(request: Request, url: URL): string {
  // The port the browser addressed (its Host header); an in-process call's URL otherwise.
  const port = /:(\d{1,5})$/.exec(request.headers.get('host') ?? '')?.[1] ?? (url.port || (url.protocol === 'https:' ? '443' : '80'));
  return `minara_local_${port}`;
}

function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get('cookie');
  if (header === null) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const REFUSED_PAGE = (message: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>minara: link refused</title></head><body><p>${message}</p></body></html>`;

/** Create the one-time login of a token-less gateway mounted at `basePath` (`''` or `/api`). */
export function createLocalLogin(basePath: string): LocalLogin {
  const tokens: Buffer[] = [];
  const sessions: Buffer[] = [];
  const root = `${basePath}/`;
  const refuse = (message: string) =>
    new Response(REFUSED_PAGE(message), { status: 403, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' } });
  const holdsSession = (request: Request, url: URL) => {
    const value = readCookie(request, cookieName(request, url));
    return value !== undefined && findIndex(sessions, value) >= 0;
  };
  return {
    issue() {
      const token = randomBytes(32).toString('base64url');
      tokens.push(digest(token));
      if (tokens.length > MAX_TOKENS) tokens.shift();
      return `${basePath}/login?token=${token}`;
    },
    holdsSession,
    handle(request, url) {
      const redirect = (setCookie?: string) =>
        new Response(null, { status: 303, headers: { location: root, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...(setCookie ? { 'set-cookie': setCookie } : {}) } });
      // A browser that already holds a session and opens the link again is simply sent to the app.
      if (holdsSession(request, url)) return redirect();
      const presented = url.searchParams.get('token') ?? '';
      const at = presented.length > 200 ? -1 : findIndex(tokens, presented);
      if (at < 0) {
        return refuse('This link was already used, or is not one this server printed. Open the link <code>minara serve</code> printed in its terminal (each works once; restart <code>minara serve</code> for a new one).');
      }
      tokens.splice(at, 1);
      const session = randomBytes(32).toString('base64url');
      sessions.push(digest(session));
      if (sessions.length > MAX_SESSIONS) sessions.shift();
      const secure = url.protocol === 'https:' ? '; Secure' : '';
      return redirect(`${cookieName(request, url)}=${session}; Path=${root}; HttpOnly; SameSite=Strict${secure}`);
    },
  };
}
