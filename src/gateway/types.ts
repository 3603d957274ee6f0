import type { MemoryStore } from '../memory/types';
import type { AgentRuntime } from '../runtime/runtime';
import type { Storage } from '../storage/types';
import type { ToolRegistry } from '../tools/types';
import type { Logger } from '../util/logger';
import type { Workspace } from '../workspace/workspace';
import type { ActiveStreams } from './active-streams';

/** Options of {@link createGateway}. A `createApp` result provides the first five fields. */
export interface GatewayOptions {
  /** The runtime that runs chat turns and resumes approved calls. */
  readonly runtime: AgentRuntime;
  /** The storage the runtime persists to (sessions are looked up for tenant checks). */
  readonly storage: Storage;
  /** The tool registry; its approvals back `/v1/approvals`. */
  readonly tools: ToolRegistry;
  /** The memory store of a tenant; without it the `/v1/memory` routes answer 404. */
  readonly memoryFor?: ((userId: string) => MemoryStore) | undefined;
  /** The markdown workspace; without it the `/v1/workspace` routes answer 404. */
  readonly workspace?: Workspace | undefined;
  /**
   * Bearer token every route except `GET /healthz` requires (`Authorization: Bearer <token>`), compared in
   * constant time. Usually `GATEWAY_AUTH_TOKEN`. @default no authentication (loopback only, see `serveGateway`)
   */
  readonly authToken?: string | undefined;
  /** Largest request body in bytes; larger bodies get 413 and are not read past the limit. @default 1048576 (1 MiB) */
  readonly maxBodyBytes?: number | undefined;
  /** Tenant when a request carries no user header. @default 'default' */
  readonly defaultUserId?: string | undefined;
  /** Header naming the tenant. Trusted: put an authenticating proxy in front when users are untrusted. @default 'x-minara-user' */
  readonly userHeader?: string | undefined;
  /** @default a console logger at `warn` */
  readonly logger?: Logger | undefined;
  /** Clock. @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** Ids of assistant messages and text parts. @default the package's `generateId` */
  readonly generateId?: ((prefix: string) => string) | undefined;
}

/** The web-standard gateway: mount `fetch` in Node `http` (`serveGateway`), Hono, Next.js or Bun. */
export interface Gateway {
  /** Handle one request. Never throws: every failure is a JSON error response. */
  fetch(request: Request): Promise<Response>;
  /** Chat turns running right now (each consumed server-side, resumable). */
  activeStreams(): number;
  /** Whether a bearer token is required. */
  readonly authRequired: boolean;
  /** Refuse new chat turns (503) and wait for the running ones to finish and persist. */
  close(): Promise<void>;
}

/** What route modules share. */
export interface GatewayDeps {
  readonly options: GatewayOptions;
  readonly streams: ActiveStreams;
  readonly maxBodyBytes: number;
  readonly defaultUserId: string;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly generateId: (prefix: string) => string;
  readonly isClosing: () => boolean;
}
