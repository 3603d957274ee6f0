import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Headers of every page: the app talks to its own origin only; no framing, no sniffing, no referrer. */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; connect-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * Serve a built single-page app from `dir` for `GET`/`HEAD` of a path (already relative to the gateway's base):
 * `/` is `index.html`; hashed files under `/assets/` are cached for a year, everything else revalidates.
 * A path that escapes `dir` (`..`, encoded separators, NUL) or names no file answers `undefined`, so the
 * caller's 404 applies. Nothing outside `dir` is ever read. The files carry no per-start secret: fetching the page
 * grants nothing (a token-less gateway's decide capability is the cookie of its one-time link, see local-login.ts).
 */
export function createStaticFiles(dir: string): (method: string, pathname: string) => Promise<Response | undefined> {
  const root = path.resolve(dir);
  return async (method, pathname) => {
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      return undefined;
    }
    if (decoded.includes('\0') || decoded.includes('\\') || decoded.split('/').includes('..')) return undefined;
    const relative = decoded === '/' || decoded === '' ? 'index.html' : decoded.replace(/^\/+/, '');
    const file = path.resolve(root, relative);
    if (file !== root && !file.startsWith(`${root}${path.sep}`)) return undefined;
    let info;
    try {
      info = await stat(file);
    } catch {
      return undefined;
    }
    if (!info.isFile()) return undefined;
    const ext = path.extname(file).toLowerCase();
    const headers: Record<string, string> = {
      'content-type': TYPES[ext] ?? 'application/octet-stream',
      'content-length': String(info.size),
      'cache-control': relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...(ext === '.html' ? PAGE_HEADERS : { 'x-content-type-options': 'nosniff' }),
    };
    if (method === 'HEAD') return new Response(null, { status: 200, headers });
    return new Response(new Uint8Array(await readFile(file)), { status: 200, headers });
  };
}
