import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MinaraError } from '../errors/minara-error';
import type { Gateway } from './types';

/** Options of {@link serveGateway}. */
export interface ServeGatewayOptions {
  readonly gateway: Gateway;
  /** `0` picks a free port. @default 8080 (`GATEWAY_PORT`) */
  readonly port?: number | undefined;
  /** @default '127.0.0.1' */
  readonly host?: string | undefined;
}

/** A listening gateway server. */
export interface ServedGateway {
  readonly server: Server;
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  readonly port: number;
  /** Close the gateway (running turns finish and persist), then the server and its connections. */
  close(): Promise<void>;
}

/** True for `localhost`, `127.0.0.0/8`, `::1` and IPv4-mapped loopback: addresses other machines cannot reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v4);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255) && m[1] === '127';
}

/**
 * Serve a gateway with Node's `http` module. Refuses (`CONFIG_INVALID`) to listen on a non-loopback
 * address when the gateway has no auth token: set `GATEWAY_AUTH_TOKEN` (or `authToken`) first.
 *
 * @example
 * ```ts
 * const served = await serveGateway({ gateway, port: Number(process.env.GATEWAY_PORT ?? 8080) });
 * console.log(`listening on ${served.url}`);
 * process.on('SIGTERM', () => void served.close());
 * ```
 */
export async function serveGateway(options: ServeGatewayOptions): Promise<ServedGateway> {
  const { gateway, port = 8080, host = '127.0.0.1' } = options;
  if (!gateway || typeof gateway.fetch !== 'function') throw new MinaraError('CONFIG_INVALID', 'serveGateway: "gateway" must come from createGateway().');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new MinaraError('CONFIG_INVALID', `serveGateway: "port" must be an integer from 0 to 65535, got ${String(port)}.`);
  if (!isLoopbackHost(host) && !gateway.authRequired) {
    throw new MinaraError(
      'CONFIG_INVALID',
      `serveGateway: refusing to listen on ${host}, which is not a loopback address, without an auth token. Set GATEWAY_AUTH_TOKEN (createGateway({ authToken })) or listen on 127.0.0.1.`,
    );
  }
  const origin = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}`;
  const server = createServer((req, res) => {
    void handleNode(gateway, origin, req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;
  const url = `${origin}:${actualPort}`;
  let closed: Promise<void> | undefined;
  return {
    server,
    url,
    port: actualPort,
    close() {
      closed ??= (async () => {
        await gateway.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 1000).unref();
        });
      })();
      return closed;
    },
  };
}

/** Bridge one Node request to the fetch handler and stream the response back. */
async function handleNode(gateway: Gateway, origin: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  let response: Response;
  try {
    const path = req.url ?? '/';
    if (!path.startsWith('/')) throw new Error('bad request target');
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD';
    response = await gateway.fetch(
      new Request(`${origin}${path}`, {
        method,
        headers,
        signal: abort.signal,
        ...(hasBody ? { body: nodeBody(req), duplex: 'half' as const } : {}),
      }),
    );
  } catch {
    response = new Response(JSON.stringify({ error: { code: 'HTTP_BAD_REQUEST', message: 'Malformed request.' } }), {
      status: 400,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
  }
  const outHeaders: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    outHeaders[key] = value;
  });
  // A body the gateway refused may still be arriving: do not keep the connection for another request.
  if (response.status === 413 || (!req.complete && req.method !== 'GET' && req.method !== 'HEAD')) outHeaders['connection'] = 'close';
  res.writeHead(response.status, outHeaders);
  if (response.body === null || req.method === 'HEAD') {
    res.end();
    await response.body?.cancel().catch(() => {});
    return;
  }
  if (response.headers.has('content-length')) {
    // A body of known size (every JSON answer): one write, headers and body together.
    res.end(Buffer.from(await response.arrayBuffer()));
    return;
  }
  // A stream (the chat's SSE): headers now, then every frame as it is produced.
  res.flushHeaders();
  const reader = response.body.getReader();
  const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
  // A client that goes away cancels only its reader; a chat turn keeps running server-side.
  void closed.then(() => reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await Promise.race([new Promise((r) => res.once('drain', r)), closed]);
      if (res.destroyed) break;
    }
    res.end();
  } catch {
    res.destroy();
  }
}

/** The request body as a web stream that never destroys the socket when the gateway stops reading. */
function nodeBody(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on('data', (chunk: Buffer) => {
        if (finished) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.once('end', () => {
        if (finished) return;
        finished = true;
        controller.close();
      });
      req.once('error', (error) => {
        if (finished) return;
        finished = true;
        controller.error(error);
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      // Stop buffering; Node discards the rest once the response is sent (with `connection: close`).
      finished = true;
      req.removeAllListeners('data');
    },
  });
}
