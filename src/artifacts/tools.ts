import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolExecutionContext } from '../tools/types';
import type { Artifact, ArtifactCallScope, ArtifactStore } from './types';

/** Options of {@link createArtifactTools}. */
export interface ArtifactToolsOptions {
  readonly store: ArtifactStore;
  /** The tenant when a call has none (a direct dispatch outside a turn). @default 'default' */
  readonly defaultUserId?: string | undefined;
}

/** Names of the artifact tools, in their stable order. */
export const ARTIFACT_TOOL_NAMES = ['create_chart', 'create_report', 'create_spreadsheet', 'get_artifact'] as const;

/** What a create_* tool returns to the model: the URI to put in the answer, not the payload. */
function created(a: Artifact): Record<string, unknown> {
  return {
    uri: a.uri, id: a.id, kind: a.kind, title: a.title,
    note: `Put ${a.uri} in your answer where the ${a.kind} belongs; it is rendered for the user at the end of the turn.`,
  };
}

/**
 * The artifact tools in tool set `artifacts`, all READ_ONLY (they write only the user's own artifact rows, never
 * the sandbox): `create_chart` (a Vega-Lite spec with inline data → `chart://x-…`), `create_report` (markdown →
 * `report://r-…`), `create_spreadsheet` (CSV → `spreadsheet://x-…`) and `get_artifact` (resolve a URI). An
 * unknown or another user's id comes back as `ARTIFACT_NOT_FOUND` listing the user's recent URIs, so the model
 * can correct itself.
 *
 * @example
 * ```ts
 * const artifacts = createArtifactStore({ storage });
 * const tools = createToolRegistry({ storage, tools: createArtifactTools({ store: artifacts }) });
 * ```
 */
export function createArtifactTools(options: ArtifactToolsOptions): ToolEntry[] {
  if (!options || typeof options.store?.createChart !== 'function') throw new MinaraError('CONFIG_INVALID', 'createArtifactTools: "store" must be an ArtifactStore (createArtifactStore).');
  const { store, defaultUserId = 'default' } = options;
  const scopeOf = (ctx: ToolExecutionContext): ArtifactCallScope => ({
    userId: ctx.call.userId ?? defaultUserId, sessionId: ctx.call.sessionId, ...(ctx.call.turnId ? { turnId: ctx.call.turnId } : {}),
  });
  const title = z.string().min(1).max(300);
  const description = z.string().max(2000).nullish();

  return [
    defineTool({
      name: 'create_chart',
      toolSet: 'artifacts',
      description:
        'Make a chart for the user from a Vega-Lite spec (https://vega.github.io/vega-lite/) with the data inline in data.values ' +
        '(no URLs): series via encoding (x, y, color), axes via encoding titles/format, annotations via layer (rule/text marks). ' +
        'Returns a chart:// URI to include in your answer.',
      inputSchema: z.object({
        title,
        spec: z.record(z.string(), z.unknown()).describe('Vega-Lite spec: { data: { values: [...] }, mark, encoding } or { layer: [...] }'),
        description,
      }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) => created(await store.createChart(scopeOf(ctx), { title: input.title, spec: input.spec, ...(input.description ? { description: input.description } : {}) })),
    }),
    defineTool({
      name: 'create_report',
      toolSet: 'artifacts',
      description: 'Save a report (markdown) the user can open and keep. Returns a report:// URI to include in your answer.',
      inputSchema: z.object({ title, markdown: z.string().min(1).max(200_000) }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) => created(await store.createReport(scopeOf(ctx), input)),
    }),
    defineTool({
      name: 'create_spreadsheet',
      toolSet: 'artifacts',
      description: 'Save a table as a CSV spreadsheet the user can download (header row first). Returns a spreadsheet:// URI to include in your answer.',
      inputSchema: z.object({ csvContent: z.string().min(1), title: title.nullish(), description }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) =>
        created(await store.createSpreadsheet(scopeOf(ctx), { csvContent: input.csvContent, ...(input.title ? { title: input.title } : {}), ...(input.description ? { description: input.description } : {}) })),
    }),
    defineTool({
      name: 'get_artifact',
      toolSet: 'artifacts',
      description: 'Read an artifact by its URI (chart://x-…, report://r-…, spreadsheet://x-…), e.g. one made in an earlier session.',
      inputSchema: z.object({ uri: z.string().min(1).max(200) }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      execute: async ({ uri }, ctx) => {
        const a = await store.get(scopeOf(ctx), uri);
        // The Vega spec is derived; the model gets the Vega-Lite spec it can edit.
        const data = a.kind === 'chart' && a.data ? { spec: a.data.spec, dataPoints: a.data.dataPoints, description: a.data.description } : a.data;
        return { uri: a.uri, id: a.id, kind: a.kind, status: a.status, title: a.title, createdAt: a.createdAt, ...(a.error ? { error: a.error } : {}), ...(data ? { data } : {}) };
      },
    }),
  ];
}
