import { createRequire } from 'node:module';
import type { Options as CsvOptions } from 'csv-parse/sync';
import { MinaraError } from '../errors/minara-error';
import type { ArtifactKind, ArtifactRecord } from '../storage/artifact-types';
import { createConsoleLogger } from '../util/logger';
import { compileChart } from './chart';
import type { Artifact, ArtifactCallScope, ArtifactStore, ArtifactStoreOptions } from './types';
import { artifactUri, newArtifactId, parseArtifactRef } from './uri';

// csv-parse loads on first use (creating a spreadsheet artifact), not with the package.
const parseCsv = (input: string, options: CsvOptions): unknown[] => (createRequire(import.meta.url)('csv-parse/sync') as { parse: (input: string, options: CsvOptions) => unknown[] }).parse(input, options);

const MAX_TITLE = 300;

/** Decode a stored row into an {@link Artifact}. */
export function toArtifact(r: ArtifactRecord): Artifact {
  const { dataJson, ...rest } = r;
  const base = { ...rest, uri: artifactUri(r.kind, r.id) };
  return (dataJson === undefined ? base : { ...base, data: JSON.parse(dataJson) as unknown }) as Artifact;
}

function checkTitle(field: string, title: unknown, required: boolean): string | undefined {
  if (title === undefined && !required) return undefined;
  if (typeof title !== 'string' || title.trim() === '') throw new MinaraError('ARTIFACT_INVALID', `${field}: expected a non-empty string.`);
  if (title.length > MAX_TITLE) throw new MinaraError('ARTIFACT_INVALID', `${field}: at most ${MAX_TITLE} characters, got ${title.length}.`);
  return title;
}

/**
 * Create the artifact store over `storage.artifacts`. Builders insert a `running` row, check and build the
 * payload, then mark it `completed` (or `error` with the reason, and throw). Every read is scoped: an id of
 * another user is `ARTIFACT_NOT_FOUND`, exactly like an id that never existed.
 *
 * @example
 * ```ts
 * const artifacts = createArtifactStore({ storage });
 * const chart = await artifacts.createChart({ userId: 'u1' }, {
 *   title: 'BTC close',
 *   spec: { data: { values: [{ d: '2026-01-01', p: 97000 }] }, mark: 'line', encoding: { x: { field: 'd', type: 'temporal' }, y: { field: 'p', type: 'quantitative' } } },
 * });
 * console.log(chart.uri); // chart://x-…
 * ```
 */
export function createArtifactStore(options: ArtifactStoreOptions): ArtifactStore {
  if (!options || typeof options.storage?.artifacts?.insert !== 'function') throw new MinaraError('CONFIG_INVALID', 'createArtifactStore: "storage" must be a Storage with the artifacts domain.');
  const { storage, chartLimits, maxReportChars = 200_000, maxCsvBytes = 5_000_000, now = () => new Date(), generateId = newArtifactId } = options;
  const logger = options.logger ?? createConsoleLogger({ level: 'warn' });
  const rows = storage.artifacts;

  async function build(scope: ArtifactCallScope, kind: ArtifactKind, title: string | undefined, make: () => unknown | Promise<unknown>): Promise<Artifact> {
    const id = generateId(kind);
    await rows.insert({ userId: scope.userId }, {
      id, kind, createdAt: now().toISOString(),
      ...(title !== undefined ? { title } : {}), ...(scope.sessionId ? { sessionId: scope.sessionId } : {}), ...(scope.turnId ? { turnId: scope.turnId } : {}),
    });
    let data: unknown;
    try {
      data = await make();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await rows.markError({ userId: scope.userId }, id, { error: message.slice(0, 2000), at: now().toISOString() });
      logger.debug('artifact: build failed', { id, kind, error: message.slice(0, 200) });
      throw error;
    }
    const done = await rows.markCompleted({ userId: scope.userId }, id, { dataJson: JSON.stringify(data), at: now().toISOString() });
    if (!done) throw new MinaraError('STORAGE_ERROR', `artifact ${id}: the row left "running" before it was completed.`);
    return toArtifact(done);
  }

  async function find(scope: ArtifactCallScope, idOrUri: string): Promise<Artifact | undefined> {
    if (typeof idOrUri !== 'string') return undefined;
    const ref = parseArtifactRef(idOrUri);
    if (!ref) return undefined;
    const r = await rows.get({ userId: scope.userId }, ref.id);
    if (!r || (ref.kind !== undefined && ref.kind !== r.kind)) return undefined;
    return toArtifact(r);
  }

  return {
    async createChart(scope, input) {
      const title = checkTitle('title', input?.title, true);
      return build(scope, 'chart', title, async () => {
        const c = await compileChart(input.spec, { title, limits: chartLimits });
        if (c.warnings.length > 0) logger.debug('artifact: vega-lite warnings', { warnings: c.warnings.slice(0, 5) });
        return { spec: c.spec, vega: c.vega, dataPoints: c.dataPoints, ...(input.description ? { description: input.description } : {}) };
      });
    },
    async createReport(scope, input) {
      const title = checkTitle('title', input?.title, true);
      return build(scope, 'report', title, () => {
        if (typeof input.markdown !== 'string' || input.markdown.trim() === '') throw new MinaraError('ARTIFACT_INVALID', 'markdown: expected non-empty markdown text.');
        if (input.markdown.length > maxReportChars) throw new MinaraError('ARTIFACT_INVALID', `markdown: ${input.markdown.length} characters; the limit is ${maxReportChars}.`);
        return { markdown: input.markdown };
      });
    },
    async createSpreadsheet(scope, input) {
      const title = checkTitle('title', input?.title, false);
      return build(scope, 'spreadsheet', title, () => {
        const csv = input.csvContent;
        if (typeof csv !== 'string' || csv.trim() === '') throw new MinaraError('ARTIFACT_INVALID', 'csvContent: expected non-empty CSV text (a header row, then data rows).');
        const bytes = Buffer.byteLength(csv);
        if (bytes > maxCsvBytes) throw new MinaraError('ARTIFACT_INVALID', `csvContent: ${bytes} bytes; the limit is ${maxCsvBytes}.`);
        let records: string[][];
        try {
          records = parseCsv(csv, { relax_column_count: false, skip_empty_lines: true, bom: true }) as string[][];
        } catch (error) {
          throw new MinaraError('ARTIFACT_INVALID', `csvContent: not valid CSV: ${error instanceof Error ? error.message : String(error)}`);
        }
        return { csvContent: csv, rows: Math.max(0, records.length - 1), columns: records[0]?.length ?? 0, ...(input.description ? { description: input.description } : {}) };
      });
    },
    async get(scope, idOrUri) {
      const found = await find(scope, idOrUri);
      if (found) return found;
      const recent = (await rows.list({ userId: scope.userId }, { limit: 10, ...(scope.sessionId ? { sessionId: scope.sessionId } : {}) })).map((r) => artifactUri(r.kind, r.id));
      const shown = typeof idOrUri === 'string' ? JSON.stringify(idOrUri.slice(0, 100)) : String(idOrUri);
      throw new MinaraError(
        'ARTIFACT_NOT_FOUND',
        `No artifact ${shown}. Refer to artifacts by the exact URI a create_* tool returned${recent.length > 0 ? `; recent ones: ${recent.join(', ')}` : '; none exist yet in this session'}.`,
      );
    },
    find,
    async list(scope, query = {}) {
      return (await rows.list({ userId: scope.userId }, query)).map(toArtifact);
    },
  };
}
