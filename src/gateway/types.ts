import type { MinaraBus } from '../events/bus';
import type { AutonomousAdmission } from '../safety/autonomy-admission';
import type { AuditVerifyReport } from '../storage/audit-types';
import type { GatewayAuthenticate, GatewayQuota } from './auth';
import type { QuotaGate } from './quotas';
import type { SessionLocks } from './session-lock';
import type { LearningStore } from '../learning/types';
import type { MemoryStore } from '../memory/types';
import type { ModelConfigStatus } from '../llm/resolve-model';
import type { AgentRuntime } from '../runtime/runtime';
import type { JobRunRecord } from '../storage/job-types';
import type { WorkflowRunQuery, WorkflowRunRecord, WorkflowTrigger } from '../storage/automation-types';
import type { Storage } from '../storage/types';
import type { ToolRegistry } from '../tools/types';
import type { Logger } from '../util/logger';
import type { Workspace } from '../workspace/workspace';
import type { ActiveStreams } from './active-streams';
import type { ArtifactStore } from '../artifacts/types';
import type { FileStore } from '../files/types';

/** Options of {@link createGateway}. A `createApp` result provides the first five fields. */
export interface GatewayOptions {
  /** The runtime that runs chat turns and resumes approved calls. */
  readonly runtime: AgentRuntime;
  /** The storage the runtime persists to (sessions are looked up for tenant checks). */
  readonly storage: Storage;
  /** The tool registry; its approvals back `/v1/approvals`. */
  readonly tools: ToolRegistry;
  /**
   * The audit trail's integrity (`app.auditIntegrity`): `GET /v1/audit/verify` then checks the keyed links and the
   * newest signed checkpoint instead of the storage's plain walk.
   */
  readonly auditIntegrity?: { verify(options?: { readonly anchor?: string | undefined }): Promise<AuditVerifyReport> } | undefined;
  /** The memory store of a tenant; without it the `/v1/memory` routes answer 404. */
  readonly memoryFor?: ((userId: string) => MemoryStore) | undefined;
  /** The learning store of a tenant: enables `/v1/learning/*` and `/v1/preferences` (createApp's `learningFor`). */
  readonly learningFor?: ((userId: string) => LearningStore | undefined) | undefined;
  /** The markdown workspace; without it the `/v1/workspace` routes answer 404. */
  readonly workspace?: Workspace | undefined;
  /** The artifact store (`app.artifacts`); without it the `/v1/artifacts` routes answer 404. */
  readonly artifacts?: ArtifactStore | undefined;
  /**
   * The file store (`app.files`): `POST /v1/files`, `GET /v1/files/:key`, and file parts in chat messages
   * (`minara-file:<key>` or `/v1/files/<key>` URLs) passed to the run as attachments. Without it those routes answer 404.
   */
  readonly files?: FileStore | undefined;
  /**
   * Agent backtest run folders served to the web app's Backtests page: `GET /v1/backtests/runs` and
   * `GET /v1/backtests/runs/:run/decisions`. One sub-folder per tenant, `<dir>/<userId>/<run>/` (each written by
   * `writeBacktestReport` / `minara backtest run --strategy agent --out`); a caller reads only their own. Files
   * larger than `maxFileBytes` (default 32 MiB) are refused with 413. @default no such routes (404)
   */
  readonly backtestRuns?: { readonly dir: string; readonly maxFileBytes?: number | undefined } | undefined;
  /**
   * Bearer token every route except `GET /healthz` requires (`Authorization: Bearer <token>`), compared in
   * constant time. Usually `GATEWAY_AUTH_TOKEN`. @default no authentication (loopback only, see `serveGateway`)
   */
  readonly authToken?: string | undefined;
  /** Largest request body in bytes; larger bodies get 413 and are not read past the limit. @default 1048576 (1 MiB) */
  readonly maxBodyBytes?: number | undefined;
  /**
   * Per-user authentication: decide who each request is (`{ userId, roles }`), or `null` for 401. Use
   * `createJwtAuthenticator` for signed tokens (a shared secret or a JWKS URL), or your own. Exclusive with
   * `authToken`. @default none: one shared token (or none), one user
   */
  readonly authenticate?: GatewayAuthenticate | undefined;
  /** The tenant in single-user mode (no `authenticate`, no trusted user header). @default 'default' */
  readonly defaultUserId?: string | undefined;
  /**
   * Honour `userHeader` (and `rolesHeader`) as the tenant: only behind a proxy that authenticates users and
   * sets these headers itself, stripping any the client sent. Off, a client's header is ignored, so holding
   * the shared token never makes anyone another user. @default false
   */
  readonly trustUserHeader?: boolean | undefined;
  /** Header naming the tenant when `trustUserHeader` is on. @default 'x-minara-user' */
  readonly userHeader?: string | undefined;
  /** Header with comma-separated roles when `trustUserHeader` is on. @default 'x-minara-roles' */
  readonly rolesHeader?: string | undefined;
  /**
   * Header with space- or comma-separated scopes when `trustUserHeader` is on; the proxy sets `approvals:decide`
   * (`DECIDE_SCOPE`) for a person and never for an automated caller. @default 'x-minara-scopes'
   */
  readonly scopesHeader?: string | undefined;
  /**
   * A second bearer token, for MCP hosts (`GATEWAY_MCP_TOKEN`): it reaches `/mcp` only, as the default user, and
   * can never decide an approval, so the host can ask for a person's consent but never give it. Needs `authToken`
   * (the person's token). With per-user JWTs, mint the host a token without the decide scope instead.
   * @default none
   */
  readonly mcpToken?: string | undefined;
  /**
   * Host names the gateway answers to besides loopback names (`localhost`, `*.localhost`) and IP addresses,
   * e.g. `['agent.example.com']` or `['.example.com']` (a name and its subdomains). Any other `Host` is refused
   * with 403 on every route, so a page that re-resolves its own name to this server (DNS rebinding) reaches
   * nothing. `GATEWAY_ALLOWED_HOSTS`. @default [] (loopback and IP addresses only)
   */
  readonly allowedHosts?: readonly string[] | undefined;
  /**
   * Origins other than the gateway's own that may send state-changing requests (your own front end on another
   * origin, e.g. `https://app.example.com`). Every other foreign `Origin` is refused. `GATEWAY_ALLOWED_ORIGINS`.
   * @default [] (same origin only)
   */
  readonly allowedOrigins?: readonly string[] | undefined;
  /** @default a console logger at `warn` */
  readonly logger?: Logger | undefined;
  /** Clock. @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** Ids of assistant messages and text parts. @default the package's `generateId` */
  readonly generateId?: ((prefix: string) => string) | undefined;
  /**
   * The path prefix the gateway is mounted under (e.g. `/api` for a Next.js `app/api/[...path]/route.ts` or
   * `app.all('/api/*', …)` in Hono): routes answer at `/api/v1/chat`, `/api/healthz`, …. Requests outside it
   * get 404. @default '' (routes at the root)
   */
  readonly basePath?: string | undefined;
  /**
   * Serve a built web app (a directory with `index.html`, e.g. the package's `dist/web`) at the gateway's root,
   * same origin as the API. Static files need no token (the page asks for one); the API routes still do.
   * @default no web app
   */
  readonly web?: { readonly dir: string } | undefined;
  /**
   * The resolved trading mode (`app.finance.tradingMode`), for `GET /v1/info`: `paper`, `live` or `shadow`, or
   * `null` when the app has no finance pack. @default not reported (`tradingMode` absent from `/v1/info`)
   */
  readonly tradingMode?: 'paper' | 'live' | 'shadow' | null | undefined;
  /** What the app knows about its model, for `GET /v1/info` (a page shows a "no model configured" panel). */
  readonly modelStatus?: ModelConfigStatus | undefined;
  /**
   * The app's event bus (`app.bus`): `GET /v1/events` streams the caller's view invalidations (a turn that traded or
   * wrote memory, an approval waiting, a stop) so the web app refreshes on change. Without it that route is 404.
   */
  readonly bus?: MinaraBus | undefined;
  /**
   * Signed webhooks that start autonomous turns: `POST /v1/signals/webhook/<name>` authenticated by the
   * webhook's HMAC secret (not the gateway token), with a ±5 minute replay window and an idempotency key.
   * @default none (the route answers 404)
   */
  readonly webhooks?: Readonly<Record<string, GatewayWebhook>> | undefined;
  /**
   * Asked before a webhook starts a turn for the webhook's user; a string refuses it with 429 and that reason (e.g. a
   * spent daily budget). The gateway itself always refuses while the global stop or that user's stop is engaged.
   */
  /**
   * Default per-user limits on user turns (`POST /v1/chat`, `POST /v1/approvals/:id`): requests per minute and USD
   * of model spend per UTC day, answered 429 with the reason and `Retry-After`. A user's stored setting
   * (`PUT /v1/quotas/:user`, `minara usage set`) or the token's `minara_quota` claim overrides them. From env:
   * `GATEWAY_QUOTA_RPM`, `GATEWAY_QUOTA_USD_PER_DAY`.
   * @default no limits
   */
  readonly quotas?: GatewayQuota | undefined;
  /** How long a turn's session lock lasts without renewal (a dead process's lock lapses after it). @default 30000 */
  readonly sessionLockLeaseMs?: number | undefined;
  readonly admitAutonomousTurn?: ((context: { readonly userId: string }) => Promise<string | undefined>) | undefined;
  /**
   * Admit a webhook's model turn and reserve its estimated cost against the daily budget until the turn ends
   * (`app.reserveAutonomousTurn`); used instead of `admitAutonomousTurn` for those turns when given.
   */
  readonly reserveAutonomousTurn?: ((context: { readonly userId: string }) => Promise<AutonomousAdmission>) | undefined;
  /** The background runner (`app.background`), for `GET /v1/jobs` (operators only). @default no `/v1/jobs` route */
  readonly background?: GatewayJobsSource | undefined;
  /**
   * The workflows (`app.workflows`): `GET /v1/workflows`, `GET /v1/workflows/runs`, `GET /v1/workflows/runs/:id`
   * (the caller's runs), `POST /v1/workflows/:name/run` (operators), and webhooks with a `workflow`.
   * @default no `/v1/workflows` routes
   */
  readonly workflows?: GatewayWorkflowsSource | undefined;
  /**
   * Serve the registry over MCP Streamable HTTP at `/mcp` (POST, GET, DELETE), behind the same authentication
   * as every other route: pass `createMcpToolServer(…)` from `@minara/agent/mcp`. Each MCP session belongs to
   * the tenant that opened it. @default no `/mcp` route
   */
  readonly mcp?: GatewayMcpHandler | undefined;
}

/** One signed webhook (see `GatewayOptions.webhooks`). */
export interface GatewayWebhook {
  /** The shared HMAC-SHA256 secret, at least 16 characters (the sender signs `<timestamp>.<body>` with it). */
  readonly secret: string;
  /** The tenant its turns run for. @default the gateway's default user */
  readonly userId?: string | undefined;
  /** Tool sets its turns may use. @default the runtime's autonomous default */
  readonly allowedToolSets?: readonly string[] | undefined;
  /**
   * Run this workflow (of `GatewayOptions.workflows`) instead of a model turn: the body is `{ "input"?: { … } }`
   * (what its `{{ input.<path> }}` templates read), the run is claimed by the idempotency key.
   * `minara serve` reads `MINARA_WEBHOOK_WORKFLOW_<NAME>`. @default a model turn
   */
  readonly workflow?: string | undefined;
}

/** What the gateway reads of the workflows (`app.workflows`, `createWorkflowAutomation` fit). */
export interface GatewayWorkflowsSource {
  list(): Promise<ReadonlyArray<{ readonly id: string; readonly description?: string | undefined; readonly source: string; readonly file?: string | undefined; readonly userId: string; readonly steps: number; readonly modelSteps: number; readonly tools: readonly string[] }>>;
  issues(): Promise<ReadonlyArray<{ readonly file: string; readonly line: number; readonly column: number; readonly path: string; readonly message: string }>>;
  get(id: string): Promise<{ readonly id: string; readonly userId: string; readonly modelSteps: number } | undefined>;
  start(
    id: string,
    options?: { readonly trigger?: WorkflowTrigger | undefined; readonly key?: string | undefined; readonly userId?: string | undefined; readonly input?: unknown },
  ): Promise<{ readonly run: WorkflowRunRecord; readonly done: Promise<WorkflowRunRecord> } | undefined>;
  runs(query?: WorkflowRunQuery): Promise<readonly WorkflowRunRecord[]>;
  getRun(id: string): Promise<WorkflowRunRecord | undefined>;
}

/** What `GET /v1/jobs` reads of the background runner (`createAgentBackground` / `createBackgroundRunner` fit). */
export interface GatewayJobsSource {
  status(): ReadonlyArray<{ readonly id: string; readonly description: string; readonly schedule: string; readonly nextRunAt: string; readonly running: boolean; readonly failures: number; readonly backoffUntil?: string | undefined; readonly lastError?: string | undefined }>;
  runs(query?: { readonly jobId?: string | undefined; readonly limit?: number | undefined }): Promise<readonly JobRunRecord[]>;
  readonly started: boolean;
  /** What autonomous turns delivered to a user, newest first (`app.background` has it): enables `GET /v1/deliveries`. */
  deliveries?(query: { readonly userId: string; readonly after?: string | undefined; readonly limit?: number | undefined }): Promise<
    ReadonlyArray<{ readonly sessionId: string; readonly source: string; readonly text: string; readonly at: string }>
  >;
}

/** What the gateway's `/mcp` route needs of an MCP server (`createMcpToolServer` from `@minara/agent/mcp` fits). */
export interface GatewayMcpHandler {
  /** Answer one Streamable HTTP request for the authenticated tenant. */
  handleHttp(request: Request, identity: { readonly userId: string }): Promise<Response>;
}

/** The web-standard gateway: mount `fetch` in Node `http` (`serveGateway`), Hono, Next.js or Bun. */
export interface Gateway {
  /** Handle one request. Never throws: every failure is a JSON error response. */
  fetch(request: Request): Promise<Response>;
  /** Chat turns running right now (each consumed server-side, resumable). */
  activeStreams(): number;
  /** Whether requests must authenticate (a shared bearer token or `authenticate`). */
  readonly authRequired: boolean;
  /**
   * Without any authentication (the loopback default), mint a one-time login link: the path (under `basePath`) to
   * open, `/login?token=…`. Print it where only the person who started the server sees it (its terminal, as
   * `minara serve` does); opening it sets an HttpOnly, SameSite=Strict session cookie and redirects to the app
   * with a proof in the URL's fragment (`<basePath>/#minara-proof=…`), and only a request carrying that cookie and
   * that proof in an `x-minara-proof` header may decide approvals (and anything else that needs the decide
   * capability): the cookie alone also reaches every other port of localhost. The page at `GET /` carries nothing, so an MCP host or a script on the machine can request
   * approvals but never decide them. Each token works once. `undefined` when authentication is configured.
   */
  localLoginPath(): string | undefined;
  /** Refuse new chat turns (503) and wait for the running ones to finish and persist. */
  close(): Promise<void>;
}

/** What route modules share. */
export interface GatewayDeps {
  readonly options: GatewayOptions;
  /** Per-user quotas on user turns (requests per minute, USD per day). */
  readonly quotas: QuotaGate;
  /** One turn per session across the fleet (storage locks with a lease). */
  readonly sessionLocks: SessionLocks;
  readonly streams: ActiveStreams;
  readonly maxBodyBytes: number;
  readonly defaultUserId: string;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly generateId: (prefix: string) => string;
  readonly isClosing: () => boolean;
  /** Signs and checks iframe-able artifact view links. */
  readonly viewLinks?: { sign(id: string, userId: string): string; verify(id: string, url: URL): string | undefined } | undefined;
}
