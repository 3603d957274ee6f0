import { acceptHeldMemory, PROPOSED_MEMORY_SOURCE, rejectHeldMemory } from '../memory/held';
import { assertCanDecide } from './decide';
import { PROFILE_KEY_PATTERN } from '../memory/validate';
import type { MemoryItem, MemoryStore } from '../memory/types';
import { field, readJsonObject } from './body';
import { badRequest, HttpError, json, notFound } from './http-error';
import type { RouteContext, RouteHandler } from './router';
import type { GatewayDeps } from './types';

/** Only rows a person wrote through an editor are editable over HTTP. */
export const EDITABLE_MEMORY_SOURCE = 'user_manual';
/** Rows a person may delete (and restore) over HTTP: their own, and what the extraction pass learned from their chats. */
export const DELETABLE_MEMORY_SOURCES: readonly string[] = [EDITABLE_MEMORY_SOURCE, 'chat_extracted'];
const MAX_LIST = 200;

function store(deps: GatewayDeps, userId: string): MemoryStore {
  if (!deps.options.memoryFor) throw notFound('Memory is not configured on this gateway.');
  return deps.options.memoryFor(userId);
}

function memoryId(raw: string | undefined): number {
  if (raw === undefined || !/^[1-9]\d{0,14}$/.test(raw)) throw badRequest(`id: expected a positive integer memory id, got ${JSON.stringify(raw ?? '')}.`);
  return Number(raw);
}

/** A row of this tenant that a person may edit; 404 for absent or another tenant's, 403 for agent-written rows. */
async function editable(memory: MemoryStore, id: number, options: { includeDeleted?: boolean; deleting?: boolean } = {}): Promise<MemoryItem> {
  const item = await memory.get(id, options.includeDeleted ? { includeDeleted: true } : {});
  if (!item) throw notFound(`No memory ${id}.`);
  if (options.deleting && item.source !== undefined && DELETABLE_MEMORY_SOURCES.includes(item.source)) return item;
  if (item.source !== EDITABLE_MEMORY_SOURCE) {
    throw new HttpError(403, 'HTTP_FORBIDDEN', `Memory ${id} was written by ${item.source ?? 'the agent'}; only "${EDITABLE_MEMORY_SOURCE}" memories can be changed over HTTP.`);
  }
  return item;
}

function category(body: Record<string, unknown>, optional: boolean): string | undefined {
  const c = field.string(body, 'category', { optional });
  if (c === undefined) return undefined;
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(c)) throw badRequest(`category: expected 1–40 characters of a-z, 0-9 and "_" starting with a letter, got ${JSON.stringify(c.slice(0, 60))}.`);
  if (c === 'fact') throw badRequest('category: "fact" rows are recorded and consolidated by the agent; use another category (e.g. "preference", "reference").');
  return c;
}

/** `GET /v1/memory?q=&category=&source=&limit=`: the tenant's memories, newest first, or the best matches of `q`. */
export function listMemory(deps: GatewayDeps): RouteHandler {
  return async ({ url, userId }: RouteContext) => {
    const memory = store(deps, userId);
    const limitRaw = url.searchParams.get('limit');
    let limit = 50;
    if (limitRaw !== null) {
      if (!/^\d{1,4}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > MAX_LIST) throw badRequest(`limit: expected an integer from 1 to ${MAX_LIST}, got ${JSON.stringify(limitRaw)}.`);
      limit = Number(limitRaw);
    }
    const cat = url.searchParams.get('category');
    if (cat !== null && !/^[a-z][a-z0-9_]{0,39}$/.test(cat)) throw badRequest(`category: expected 1–40 characters of a-z, 0-9 and "_", got ${JSON.stringify(cat.slice(0, 60))}.`);
    const source = url.searchParams.get('source');
    if (source !== null && !/^[a-z][a-z0-9_]{0,39}$/.test(source)) throw badRequest(`source: expected 1–40 characters of a-z, 0-9 and "_", got ${JSON.stringify(source.slice(0, 60))}.`);
    const q = url.searchParams.get('q');
    if (q !== null && (q.trim() === '' || q.length > 500)) throw badRequest('q: expected a search query of 1–500 characters.');
    const memories = q !== null
      ? (await memory.search(q, { limit, ...(cat !== null ? { category: cat } : {}) })).filter((m) => source === null || m.source === source)
      : await memory.read({ limit, ...(cat !== null ? { category: cat } : {}), ...(source !== null ? { source } : {}) });
    return json(200, { memories: memories.map(({ score: _score, ...m }) => m) });
  };
}

/** `POST /v1/memory { category, content, metadata? }`: write a `user_manual` memory. */
export function createMemory(deps: GatewayDeps): RouteHandler {
  return async ({ request, userId }: RouteContext) => {
    const memory = store(deps, userId);
    const body = await readJsonObject(request, deps.maxBodyBytes);
    field.only(body, ['category', 'content', 'metadata']);
    const cat = category(body, false)!;
    const content = field.string(body, 'content', { min: 1 })!;
    const metadata = body['metadata'];
    if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) throw badRequest('metadata: expected a JSON object.');
    const { id } = await memory.write({
      category: cat,
      content,
      source: EDITABLE_MEMORY_SOURCE,
      ...(metadata !== undefined ? { metadata: metadata as Record<string, unknown> } : {}),
    });
    return json(201, { memory: await memory.get(id) });
  };
}

/** `PATCH /v1/memory/:id { content?, category? }`: edit a `user_manual` memory. */
export function updateMemory(deps: GatewayDeps): RouteHandler {
  return async ({ request, params, userId }: RouteContext) => {
    const memory = store(deps, userId);
    const id = memoryId(params['id']);
    const body = await readJsonObject(request, deps.maxBodyBytes);
    field.only(body, ['category', 'content']);
    const content = field.string(body, 'content', { optional: true, min: 1 });
    const cat = category(body, true);
    if (content === undefined && cat === undefined) throw badRequest('content: expected a string (or give "category").');
    await editable(memory, id);
    const updated = await memory.update(id, { ...(content !== undefined ? { content } : {}), ...(cat !== undefined ? { category: cat } : {}) });
    return json(200, { memory: updated });
  };
}

/** `DELETE /v1/memory/:id`: soft-delete a `user_manual` or `chat_extracted` memory (restorable). */
export function deleteMemory(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const memory = store(deps, userId);
    const id = memoryId(params['id']);
    await editable(memory, id, { deleting: true });
    await memory.softDelete(id);
    return json(200, { id, deleted: true });
  };
}

/** `POST /v1/memory/:id/restore`: undo a soft delete. */
export function restoreMemory(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const memory = store(deps, userId);
    const id = memoryId(params['id']);
    await editable(memory, id, { includeDeleted: true, deleting: true });
    await memory.restore(id);
    return json(200, { memory: await memory.get(id) });
  };
}

/** The profile key of a route (`/v1/memory/profile/:key`): a 400 naming the field when it is not a profile key. */
function profileKey(raw: string | undefined): string {
  const key = raw ?? '';
  if (!PROFILE_KEY_PATTERN.test(key)) throw badRequest(`key: expected a profile key matching ${String(PROFILE_KEY_PATTERN)}, got ${JSON.stringify(key.slice(0, 80))}.`);
  return key;
}

/** `GET /v1/memory/profile`: the tenant's profile keys (`setBy` says whether the person or the agent set each). */
export function listProfile(deps: GatewayDeps): RouteHandler {
  return async ({ userId }: RouteContext) => json(200, { profile: await store(deps, userId).profile.list() });
}

/** `PUT /v1/memory/profile/:key { value }`: the person sets a profile key; the agent never replaces it afterwards. */
export function setProfile(deps: GatewayDeps): RouteHandler {
  return async ({ request, params, userId }: RouteContext) => {
    const memory = store(deps, userId);
    const key = profileKey(params['key']);
    const body = await readJsonObject(request, deps.maxBodyBytes);
    field.only(body, ['value']);
    const value = field.string(body, 'value', { min: 1 })!;
    return json(200, { entry: await memory.profile.set(key, value, { setBy: 'user' }) });
  };
}

/** `DELETE /v1/memory/profile/:key`: remove a profile key (the person's or the agent's). */
export function deleteProfile(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const key = profileKey(params['key']);
    const deleted = await store(deps, userId).profile.delete(key);
    if (!deleted) throw notFound(`No profile key ${JSON.stringify(key)}.`);
    return json(200, { key, deleted: true });
  };
}

/**
 * `POST /v1/memory/:id/accept` and `/reject`: an operator decides a memory the model wrote after reading untrusted
 * content (source `proposed`): accepted, it reaches prompts; rejected, it is soft-deleted. Needs the decide
 * capability (like approvals and learning decisions); the row must be the caller's own (404 otherwise).
 */
export function decideHeldMemory(deps: GatewayDeps, decision: 'accept' | 'reject'): RouteHandler {
  return async ({ params, userId, canDecide }: RouteContext) => {
    assertCanDecide(canDecide);
    const memory = store(deps, userId);
    const id = memoryId(params['id']);
    const row = await memory.get(id);
    if (!row) throw notFound(`No memory ${id}.`);
    if (row.source !== PROPOSED_MEMORY_SOURCE) throw new HttpError(409, 'HTTP_CONFLICT', `Memory ${id} is not held for review (source ${row.source ?? 'none'}).`);
    const result = decision === 'accept' ? await acceptHeldMemory(memory, id) : await rejectHeldMemory(memory, id);
    return json(200, result);
  };
}
