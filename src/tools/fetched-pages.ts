import type { ToolCallContext } from './types';

/** A page `web_fetch` read in this turn, as the turn's ledger keeps it. */
export interface FetchedPage {
  /** The URL as fetched (after redirects), without the fragment. */
  readonly url: string;
  /** The URL the model asked for, when it differs (a redirect). */
  readonly requestedUrl?: string | undefined;
  /** The page's `<title>`, when it had one. */
  readonly title?: string | undefined;
  readonly fetchedAt: string;
  /** Characters of text the model was given. */
  readonly chars: number;
}

const LEDGER_KEY = 'minara.fetchedPages';

/** The URL form pages are matched by: the fragment dropped, the rest as `URL` serialises it. */
export function normalizePageUrl(raw: string): string | undefined {
  try {
    const u = new URL(raw);
    u.hash = '';
    return u.href;
  } catch {
    return undefined;
  }
}

/**
 * Note a page read in this turn (web_fetch calls this after a successful read). The ledger lives in the turn's
 * call context, so it covers exactly this turn (and the sub-agent turns it delegates, which share the context's
 * state); the deep-research report tool accepts citations of these pages only.
 */
export function noteFetchedPage(ctx: ToolCallContext, page: FetchedPage): void {
  let ledger = ctx.state.get(LEDGER_KEY) as Map<string, FetchedPage> | undefined;
  if (!ledger) {
    ledger = new Map();
    ctx.state.set(LEDGER_KEY, ledger);
  }
  const url = normalizePageUrl(page.url) ?? page.url;
  ledger.set(url, { ...page, url });
  const requested = page.requestedUrl !== undefined ? normalizePageUrl(page.requestedUrl) : undefined;
  if (requested !== undefined && requested !== url) ledger.set(requested, { ...page, url });
}

/** The pages read in this turn, keyed by normalised URL (a redirected page under both its URLs). */
export function fetchedPages(ctx: ToolCallContext): ReadonlyMap<string, FetchedPage> {
  return (ctx.state.get(LEDGER_KEY) as Map<string, FetchedPage> | undefined) ?? new Map();
}

/** The `<title>` of an HTML document, whitespace collapsed, at most 200 characters. */
export function htmlTitle(html: string): string | undefined {
  const m = /<title[^>]*>([\s\S]{0,2000}?)<\/title>/i.exec(html);
  if (!m) return undefined;
  const t = m[1]!
    .replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
  return t ? t.slice(0, 200) : undefined;
}
