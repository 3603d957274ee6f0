import { type AppView, APP_VIEWS, type MinaraBus, type MinaraBusEvents } from '../events/bus';
import { HttpError } from './http-error';
import type { RouteContext, RouteHandler } from './router';

/** Open `GET /v1/events` streams per user at most (a tab each; more is a leak or an attack). */
export const MAX_EVENT_STREAMS_PER_USER = 8;
/** Invalidations arriving within this window go out as one message. */
const COALESCE_MS = 150;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 25_000;

/** The live-update route and what closes its streams when the gateway closes. */
export interface EventStreams {
  readonly route: RouteHandler;
  /** Streams open now (all users). */
  open(): number;
  /** End every stream (the gateway is closing). */
  closeAll(): void;
}

/** Listen on the bus for what changes `userId`'s views; returns what stops listening. */
function listenForUser(bus: MinaraBus, userId: string, invalidate: (views: readonly AppView[]) => void): () => void {
  const mine = (e: { readonly userId?: string | undefined }) => e.userId === userId;
  const onViews = (e: MinaraBusEvents['views:invalidated']) => mine(e) && invalidate(e.views);
  const onMemory = (e: { readonly userId: string }) => mine(e) && invalidate(['memory']);
  const onTrade = (e: MinaraBusEvents['trade:recorded']) => mine(e) && invalidate(['portfolio', 'audit']);
  // The user's own stop, and the global one (it concerns everyone).
  const onStop = (e: MinaraBusEvents['emergency-stop:changed']) => (e.userId === undefined || mine(e)) && invalidate(['audit']);
  bus.on('views:invalidated', onViews);
  bus.on('memory:written', onMemory);
  bus.on('memory:deleted', onMemory);
  bus.on('trade:recorded', onTrade);
  bus.on('emergency-stop:changed', onStop);
  return () => {
    bus.off('views:invalidated', onViews);
    bus.off('memory:written', onMemory);
    bus.off('memory:deleted', onMemory);
    bus.off('trade:recorded', onTrade);
    bus.off('emergency-stop:changed', onStop);
  };
}

/**
 * `GET /v1/events` (server-sent events): what changed for the caller, so the web app refreshes a view when it
 * changes instead of polling or waiting for a reload (agent-loop §5, the post-turn fan-out's cache invalidation).
 * Each message is `event: invalidate` with `data: {"views":["portfolio","memory"]}`; the first is `event: ready`.
 * Only the caller's own events are sent (the tenant is the authenticated user); a read, so no decide capability is
 * needed; at most {@link MAX_EVENT_STREAMS_PER_USER} streams per user (429). 404 without a bus. Sources: the turn
 * fan-out (`views:invalidated`), memory writes and deletes, recorded trades, and stop changes.
 */
export function createEventStreams(bus: MinaraBus | undefined): EventStreams {
  const perUser = new Map<string, number>();
  const closers = new Set<() => void>();
  const route: RouteHandler = async ({ userId, request }: RouteContext) => {
    if (!bus) throw new HttpError(404, 'NOT_FOUND', 'Live updates are not configured on this gateway (no event bus).');
    if ((perUser.get(userId) ?? 0) >= MAX_EVENT_STREAMS_PER_USER) {
      throw new HttpError(429, 'HTTP_TOO_MANY_REQUESTS', `At most ${MAX_EVENT_STREAMS_PER_USER} live-update streams per user; close a tab.`);
    }
    perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
    const encoder = new TextEncoder();
    let pending = new Set<AppView>();
    let flushTimer: ReturnType<typeof setTimeout> | undefined;
    let keepalive: ReturnType<typeof setInterval> | undefined;
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    let closed = false;
    const offs: Array<() => void> = [];

    const send = (text: string): void => {
      if (closed || !controller) return;
      try {
        controller.enqueue(encoder.encode(text));
      } catch {
        close();
      }
    };
    const flush = (): void => {
      flushTimer = undefined;
      if (pending.size === 0) return;
      const views = APP_VIEWS.filter((v) => pending.has(v));
      pending = new Set();
      send(`event: invalidate\ndata: ${JSON.stringify({ views })}\n\n`);
    };
    const invalidate = (views: readonly AppView[]): void => {
      if (views.length === 0) return;
      for (const v of views) pending.add(v);
      flushTimer ??= setTimeout(flush, COALESCE_MS);
    };
    offs.push(listenForUser(bus, userId, invalidate));
    function close(): void {
      if (closed) return;
      closed = true;
      closers.delete(close);
      for (const off of offs.splice(0)) off();
      if (flushTimer) clearTimeout(flushTimer);
      if (keepalive) clearInterval(keepalive);
      const n = (perUser.get(userId) ?? 1) - 1;
      if (n <= 0) perUser.delete(userId);
      else perUser.set(userId, n);
      try {
        controller?.close();
      } catch {
        // the client went away first
      }
    }
    closers.add(close);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        c.enqueue(encoder.encode(`retry: 3000\nevent: ready\ndata: ${JSON.stringify({ views: APP_VIEWS })}\n\n`));
        keepalive = setInterval(() => send(': keepalive\n\n'), KEEPALIVE_MS);
        keepalive.unref?.();
      },
      cancel() {
        close();
      },
    });
    request.signal.addEventListener('abort', close, { once: true });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } });
  };
  return {
    route,
    open: () => closers.size,
    closeAll: () => {
      for (const close of [...closers]) close();
    },
  };
}
