import { MinaraError } from '../errors/minara-error';
import { EDITABLE_WORKSPACE_FILES } from '../workspace/files';
import { OPERATOR_IDENTITY_FILES } from '../workspace/tenant';
import type { Workspace } from '../workspace/workspace';
import { WorkspaceConflictError } from '../workspace/errors';
import { field, readJsonObject } from './body';
import { badRequest, HttpError, json, notFound } from './http-error';
import { decodeParam, type RouteContext, type RouteHandler } from './router';
import type { GatewayDeps } from './types';

function workspaceOf(deps: GatewayDeps): Workspace {
  if (!deps.options.workspace) throw notFound('The workspace is not configured on this gateway.');
  return deps.options.workspace;
}

/**
 * The file name of a path parameter, checked before the workspace is touched: separators (also as
 * `%2F`/`%5C`), `..`, NUL and control characters are a 400; a clean name off the whitelist is a 404.
 */
function fileName(raw: string | undefined): string {
  const name = decodeParam('name', raw ?? '');
  // eslint-disable-next-line no-control-regex
  if (/[/\\\u0000-\u001f]/.test(name) || name.includes('..') || name.length > 255) {
    throw new HttpError(400, 'SANDBOX_ESCAPE', `name: ${JSON.stringify(name.slice(0, 80))} is not a plain workspace file name.`);
  }
  if (!EDITABLE_WORKSPACE_FILES.has(name)) {
    throw new HttpError(404, 'WORKSPACE_FILE_NOT_EDITABLE', `name: "${name}" is not an editable workspace file; expected one of ${[...EDITABLE_WORKSPACE_FILES].join(', ')}.`);
  }
  return name;
}

/** `GET /v1/workspace/files`: the editable files with their sha256 (`null` when absent). */
export function listWorkspaceFiles(deps: GatewayDeps): RouteHandler {
  return async ({ operator }: RouteContext) => {
    const ws = workspaceOf(deps);
    const files = [];
    for (const name of EDITABLE_WORKSPACE_FILES) {
      // Tenants see the agent's identity files; the operator's own memory and heartbeat stay the operator's.
      if (!operator && !OPERATOR_IDENTITY_FILES.has(name)) continue;
      const f = await ws.readFile(name);
      files.push({ name, exists: f.exists, sha256: f.sha256, bytes: Buffer.byteLength(f.content) });
    }
    return json(200, { files });
  };
}

/** `GET /v1/workspace/files/:name`: `{ name, exists, content, sha256 }`. */
export function getWorkspaceFile(deps: GatewayDeps): RouteHandler {
  return async ({ params, operator }: RouteContext) => {
    const ws = workspaceOf(deps);
    const name = fileName(params['name']);
    if (!operator && !OPERATOR_IDENTITY_FILES.has(name)) throw new HttpError(403, 'HTTP_FORBIDDEN', `${name} is the operator's; reading it needs the "operator" role.`);
    const f = await ws.readFile(name);
    return json(200, { name: f.name, exists: f.exists, content: f.content, sha256: f.sha256 });
  };
}

/**
 * `PUT /v1/workspace/files/:name { content, expectedSha256 }`: write if the file still has the sha256 the
 * editor loaded (`null`: only if it does not exist). 409 with `currentSha256` otherwise; nothing written.
 */
export function putWorkspaceFile(deps: GatewayDeps): RouteHandler {
  return async ({ request, params, operator }: RouteContext) => {
    // The workspace files are the operator's: SOUL.md and AGENTS.md shape every tenant's prompt.
    if (!operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Workspace files are the operator\'s; writing them needs the "operator" role.');
    const ws = workspaceOf(deps);
    const name = fileName(params['name']);
    const body = await readJsonObject(request, deps.maxBodyBytes);
    field.only(body, ['content', 'expectedSha256']);
    const content = field.string(body, 'content')!;
    if (!('expectedSha256' in body)) throw badRequest('expectedSha256: required; the sha256 from GET (or null to create a file that must not exist yet).');
    const expected = body['expectedSha256'];
    if (expected !== null && (typeof expected !== 'string' || !/^[0-9a-f]{64}$/i.test(expected))) {
      throw badRequest('expectedSha256: expected the 64-hex sha256 from GET, or null.');
    }
    try {
      const r = await ws.writeFile(name, content, { expectedSha256: expected });
      return json(200, { name: r.name, sha256: r.sha256, bytes: r.bytes });
    } catch (error) {
      if (error instanceof WorkspaceConflictError || (MinaraError.isInstance(error) && error.code === 'WORKSPACE_CONFLICT')) {
        const current = error instanceof WorkspaceConflictError ? error.actualSha256 : (await ws.readFile(name)).sha256;
        throw new HttpError(409, 'WORKSPACE_CONFLICT', error.message, { currentSha256: current });
      }
      throw error;
    }
  };
}
