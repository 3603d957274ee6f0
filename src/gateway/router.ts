import type { GatewayQuota } from './auth';
import { HttpError, badRequest } from './http-error';

/** Path parameters of a matched route, URL-decoded. */
export type RouteParams = Readonly<Record<string, string>>;

/** What a route handler receives. */
export interface RouteContext {
  readonly request: Request;
  readonly url: URL;
  readonly params: RouteParams;
  /** The tenant: from `authenticate`, the trusted user header, or the gateway's default user. */
  readonly userId: string;
  /** May write the shared workspace files: role `operator`, or the single user when there are no per-user identities. */
  readonly operator: boolean;
  /**
   * May decide approvals: a credential carrying `approvals:decide` (a person's token or JWT scope, the trusted
   * proxy's scopes header, or the per-start local key of the served web app). Automated callers only request.
   */
  readonly canDecide: boolean;
  /** The user's quota as the credential states it (a JWT's `minara_quota` claim), if any. */
  readonly quota?: GatewayQuota | undefined;
}

export type RouteHandler = (ctx: RouteContext) => Promise<Response> | Response;

interface Route {
  readonly method: string;
  readonly segments: readonly string[];
  readonly handler: RouteHandler;
}

/** The outcome of matching a path: a handler, a route that exists under other methods (405), or nothing (404). */
export type RouteMatch =
  | { readonly kind: 'found'; readonly handler: RouteHandler; readonly params: RouteParams }
  | { readonly kind: 'method-not-allowed'; readonly allow: readonly string[] }
  | { readonly kind: 'not-found' };

/**
 * A tiny exact-segment router: patterns like `/v1/memory/:id/restore`. A `:param` matches one non-empty
 * segment and is URL-decoded (a malformed escape is a 400). No wildcards, no regexes, no trailing-slash
 * leniency: an unknown path is a 404 and a known path with the wrong method is a 405.
 */
export function createRouter() {
  const routes: Route[] = [];
  return {
    add(method: string, pattern: string, handler: RouteHandler): void {
      routes.push({ method, segments: pattern.split('/').slice(1), handler });
    },
    match(method: string, pathname: string): RouteMatch {
      const parts = pathname.split('/').slice(1);
      const allow = new Set<string>();
      for (const route of routes) {
        const params = matchSegments(route.segments, parts);
        if (!params) continue;
        if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { kind: 'found', handler: route.handler, params };
        allow.add(route.method);
      }
      return allow.size > 0 ? { kind: 'method-not-allowed', allow: [...allow] } : { kind: 'not-found' };
    },
  };
}

function matchSegments(pattern: readonly string[], parts: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const v = parts[i]!;
    if (p.startsWith(':')) {
      if (v === '') return undefined;
      params[p.slice(1)] = v;
    } else if (p !== v) return undefined;
  }
  return params;
}

/** URL-decode a path parameter; a malformed escape is a 400 naming the parameter. */
export function decodeParam(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`${name}: malformed URL escape in ${JSON.stringify(raw)}.`);
  }
}

export function methodNotAllowed(method: string, allow: readonly string[]): HttpError {
  return new HttpError(405, 'HTTP_METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${allow.join(' or ')}.`);
}
