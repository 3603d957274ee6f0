import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * How a gateway without authentication (`minara serve` on loopback) knows a decision comes from the person who
 * started it, the way a notebook server does: the process prints a URL with a one-time token to its own terminal;
 * opening it sets an HttpOnly, SameSite=Strict cookie and redirects to the app without the token. `GET /` carries
 * nothing, so a script or another account on the machine that fetches the page holds nothing it can decide with;
 * the token in the terminal's scrollback is spent once used; a page of another site never gets the cookie sent
 * (SameSite=Strict) and is refused by the perimeter anyway.
 *
 * Deciding needs the cookie and a second secret, the proof, in the {@link LOCAL_PROOF_HEADER} header. Browsers send a
 * `localhost` cookie to every port of it (cookies are not isolated by port, RFC 6265 §8.5), so any other server on
 * the machine that the browser visits receives the cookie and could replay it with any headers it likes. The proof
 * never travels in a cookie: the login's redirect carries it in the URL's fragment (`<base>/#minara-proof=…`, which
 * the browser does not send to any server), the app moves it into its origin's `localStorage` (one per port) and
 * takes it out of the address bar, and sends it with each request. A browser that holds the cookie and opens a spent
 * link again is sent to the app without a new proof: the cookie alone never mints one (a fresh link does).
 *
 * Tokens, session values and proofs are 32 random bytes; each is compared in constant time (SHA-256 of each side,
 * `timingSafeEqual`), never looked up by value.
 */
export interface LocalLogin {
  /** Mint a one-time token: the path (under the base path) to open, `/login?token=…`. */
  issue(): string;
  /** Answer `GET <base>/login?token=…`: set the cookie and redirect (303) to `<base>/#minara-proof=…`, or refuse (403). */
  handle(request: Request, url: URL): Response;
  /** Whether the request carries a session cookie this login set and, in {@link LOCAL_PROOF_HEADER}, that session's proof. */
  holdsSession(request: Request, url: URL): boolean;
}

/** The request header that carries the proof of a local session (see {@link LocalLogin}). */
const LOCAL_PROOF_HEADER = 'x-minara-proof';

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
  /** Digests of each session's cookie value, and of its proof at the same index. */
  const sessions: Buffer[] = [];
  const proofs: Buffer[] = [];
  const root = `${basePath}/`;
  const refuse = (message: string) =>
    new Response(REFUSED_PAGE(message), { status: 403, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' } });
  /** The index of the session whose cookie the request carries, or -1. */
  const sessionOf = (request: Request, url: URL): number => {
    const value = readCookie(request, cookieName(request, url));
    return value === undefined ? -1 : findIndex(sessions, value);
  };
  const holdsSession = (request: Request, url: URL) => {
    const at = sessionOf(request, url);
    const proof = request.headers.get(LOCAL_PROOF_HEADER) ?? '';
    return at >= 0 && proof.length > 0 && proof.length <= 200 && timingSafeEqual(proofs[at]!, digest(proof));
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
      const redirect = (location: string, setCookie?: string) =>
        new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...(setCookie ? { 'set-cookie': setCookie } : {}) } });
      const presented = url.searchParams.get('token') ?? '';
      const at = presented.length > 200 ? -1 : findIndex(tokens, presented);
      if (at < 0) {
        // A browser that already holds a session and opens a spent link again is simply sent to the app, with no
        // new proof: the cookie reaches other local servers too, and must not be enough to get one. (A fresh link
        // signs it in again, with a new session and proof.)
        if (sessionOf(request, url) >= 0) return redirect(root);
        return refuse('This link was already used, or is not one this server printed. Open the link <code>minara serve</code> printed in its terminal (each works once; restart <code>minara serve</code> for a new one).');
      }
      tokens.splice(at, 1);
      const session = randomBytes(32).toString('base64url');
      const proof = randomBytes(32).toString('base64url');
      sessions.push(digest(session));
      proofs.push(digest(proof));
      if (sessions.length > MAX_SESSIONS) {
        sessions.shift();
        proofs.shift();
      }
      const secure = url.protocol === 'https:' ? '; Secure' : '';
      return redirect(`${root}#minara-proof=${proof}`, `${cookieName(request, url)}=${session}; Path=${root}; HttpOnly; SameSite=Strict${secure}`);
    },
  };
}
