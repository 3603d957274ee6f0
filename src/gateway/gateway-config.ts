/**
 * `createGateway`'s options checked and resolved (defaults applied, the perimeter, the web app's files and the
 * one-time login built): every misconfiguration throws `CONFIG_INVALID` here, at construction, in the order the
 * checks always ran.
 */
import { MinaraError } from '../errors/minara-error';
import type { ModelConfigStatus } from '../llm/resolve-model';
import { generateId as defaultGenerateId } from '../util/ids';
import { createConsoleLogger, type Logger } from '../util/logger';
import type { GatewayAuthenticate } from './auth';
import { DEFAULT_MAX_BODY_BYTES } from './body';
import { createLocalLogin, type LocalLogin } from './local-login';
import { checkAllowedHosts, checkAllowedOrigins, createPerimeter, type Perimeter } from './perimeter';
import { createStaticFiles } from './static-files';
import type { GatewayOptions } from './types';

/** A user id the gateway accepts from a header, a token or its own options. */
export const USER_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** The options with their defaults, and the parts built from them before any state exists. */
export interface GatewayConfig {
  readonly authToken: string | undefined;
  readonly mcpToken: string | undefined;
  readonly authenticate: GatewayAuthenticate | undefined;
  readonly maxBodyBytes: number;
  readonly defaultUserId: string;
  readonly userHeader: string;
  readonly rolesHeader: string;
  readonly scopesHeader: string;
  readonly trustUserHeader: boolean;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly generateId: (prefix: string) => string;
  readonly basePath: string;
  readonly web: { readonly dir: string } | undefined;
  readonly modelStatus: ModelConfigStatus | undefined;
  /** The web app's files (`web.dir`), served before authentication. */
  readonly staticFiles: ((method: string, pathname: string) => Promise<Response | undefined>) | undefined;
  /** The one-time login link of a gateway without any authentication (see local-login.ts). */
  readonly localLogin: LocalLogin | undefined;
  readonly perimeter: Perimeter;
}

/** Check the four parts a gateway cannot run without. */
function checkRequired(options: GatewayOptions): void {
  if (!options || typeof options !== 'object') throw new MinaraError('CONFIG_INVALID', 'createGateway: options are required.');
  if (!options.runtime || typeof options.runtime.run !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "runtime" must be an AgentRuntime (createAgentRuntime).');
  if (!options.storage || typeof options.storage.conversations?.getSession !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "storage" must be a Storage.');
  if (!options.tools || typeof options.tools.approvals?.get !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "tools" must be a ToolRegistry (createToolRegistry).');
}

/** Check how callers authenticate: the shared token, the per-user authenticator, the MCP hosts' token. */
function checkAuth(options: GatewayOptions, authToken: string | undefined, authenticate: GatewayAuthenticate | undefined, trustUserHeader: boolean, mcpToken: string | undefined): void {
  if (authToken !== undefined && (typeof authToken !== 'string' || authToken.length < 16 || /\s/.test(authToken))) {
    throw new MinaraError('CONFIG_INVALID', 'createGateway: "authToken" must be a string of at least 16 characters without whitespace (e.g. `openssl rand -hex 32`).');
  }
  if (authenticate !== undefined && typeof authenticate !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "authenticate" must be a function (request) => { userId, roles } | null.');
  if (authenticate !== undefined && authToken !== undefined) {
    throw new MinaraError('CONFIG_INVALID', 'createGateway: give "authenticate" (per-user) or "authToken" (one shared token), not both.');
  }
  // With per-user identities, one workspace object would carry each user's heartbeat and journal (session and
  // approval ids) into every other user's prompt: the runtime must give each user their own view.
  const runtimeOptions = options.runtime.options as { readonly workspace?: unknown; readonly sharedWorkspace?: boolean } | undefined;
  if ((authenticate !== undefined || trustUserHeader) && typeof runtimeOptions?.workspace === 'object' && runtimeOptions.workspace !== null && runtimeOptions.sharedWorkspace !== true) {
    throw new MinaraError(
      'CONFIG_INVALID',
      'createGateway: per-user identities ("authenticate" or "trustUserHeader") over a runtime whose "workspace" is one Workspace object would put one user\'s sessions and approvals in another\'s prompt. Give createAgentRuntime "workspace: (scope) => …" (createTenantWorkspace per user), or "sharedWorkspace: true" (each user then gets a tenant view over it). See docs/gateway.md.',
    );
  }
  if (mcpToken !== undefined) {
    if (authToken === undefined) throw new MinaraError('CONFIG_INVALID', 'createGateway: "mcpToken" needs "authToken" (the person\'s token); with per-user "authenticate", mint the MCP host a credential without the approvals:decide scope instead.');
    if (typeof mcpToken !== 'string' || mcpToken.length < 16 || /\s/.test(mcpToken) || mcpToken === authToken) {
      throw new MinaraError('CONFIG_INVALID', 'createGateway: "mcpToken" must be a string of at least 16 characters without whitespace, different from "authToken".');
    }
  }
}

/** Check `options`, apply the defaults and build the perimeter, the web app's files and the one-time login. */
export function resolveGatewayConfig(options: GatewayOptions): GatewayConfig {
  checkRequired(options);
  const {
    authToken,
    maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
    defaultUserId = 'default',
    userHeader = 'x-minara-user',
    rolesHeader = 'x-minara-roles',
    scopesHeader = 'x-minara-scopes',
    trustUserHeader = false,
    mcpToken,
    authenticate,
    logger = createConsoleLogger({ level: 'warn' }),
    now = () => new Date(),
    generateId = defaultGenerateId,
    basePath = '',
    web,
    modelStatus,
  } = options;
  if (web !== undefined && (typeof web !== 'object' || web === null || typeof web.dir !== 'string' || web.dir === '')) {
    throw new MinaraError('CONFIG_INVALID', 'createGateway: "web" must be { dir: "<a directory with index.html>" }.');
  }
  const staticFiles = web ? createStaticFiles(web.dir) : undefined;
  if (typeof basePath !== 'string' || (basePath !== '' && !/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath))) {
    throw new MinaraError('CONFIG_INVALID', `createGateway: "basePath" must be "" or a path like "/api" (segments of letters, digits, ".", "_", "~", "-"; no trailing slash), got ${JSON.stringify(basePath)}.`);
  }
  // Without any authentication, deciding needs the cookie the one-time link (printed by whoever started the
  // server) sets; the page itself carries nothing (see local-login.ts).
  const singleUser = authToken === undefined && authenticate === undefined && !trustUserHeader;
  const localLogin = singleUser ? createLocalLogin(basePath) : undefined;
  checkAuth(options, authToken, authenticate, trustUserHeader, mcpToken);
  const perimeter = createPerimeter({
    allowedHosts: checkAllowedHosts(options.allowedHosts ?? [], 'createGateway: "allowedHosts"'),
    allowedOrigins: checkAllowedOrigins(options.allowedOrigins ?? [], 'createGateway: "allowedOrigins"'),
  });
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1024) throw new MinaraError('CONFIG_INVALID', 'createGateway: "maxBodyBytes" must be an integer of at least 1024.');
  if (!USER_ID.test(defaultUserId)) throw new MinaraError('CONFIG_INVALID', 'createGateway: "defaultUserId" must be 1–128 characters of letters, digits, ".", "_", ":", "@" or "-".');
  return {
    authToken, mcpToken, authenticate, maxBodyBytes, defaultUserId, userHeader, rolesHeader, scopesHeader, trustUserHeader,
    logger, now, generateId, basePath, web, modelStatus, staticFiles, localLogin, perimeter,
  };
}
