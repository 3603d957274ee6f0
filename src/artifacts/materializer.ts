import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MinaraError } from '../errors/minara-error';
import { createConsoleLogger, type Logger } from '../util/logger';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../util/private-fs';
import { type ChartPngRenderer, launchChartPngRenderer } from './png';
import type { Artifact, ArtifactCallScope, ArtifactStore } from './types';
import { ARTIFACT_ID, findArtifactUris } from './uri';
import { renderArtifactHtml } from './viewer';

/** Options of {@link createArtifactMaterializer}. */
export interface ArtifactMaterializerOptions {
  readonly store: ArtifactStore;
  /** Where artifacts are written: `<dir>/<id>/`. Must not be inside the sandbox. Usually `<dataDir>/artifacts`. */
  readonly dir: string;
  /**
   * PNG of each chart via headless Chromium (`playwright-core` + the system `chromium`): `'auto'` renders when
   * both are there and otherwise logs `chart_png_skipped` once per artifact and goes on; `false` never tries.
   * @default 'auto'
   */
  readonly png?: 'auto' | false | undefined;
  /** The Chromium binary. @default the first of `CHROMIUM_PATHS` that exists */
  readonly chromiumPath?: string | undefined;
  /** @default a console logger at `warn` */
  readonly logger?: Logger | undefined;
}

/** What was written for one artifact. */
export interface MaterializedArtifact {
  readonly id: string;
  readonly uri: string;
  readonly kind: Artifact['kind'];
  /** The artifact's folder. */
  readonly dir: string;
  /** The viewer page (`index.html`), openable from disk without a network. */
  readonly html: string;
  /** The artifact as JSON (`artifact.json`). */
  readonly json: string;
  /** `data.csv` of a spreadsheet. */
  readonly csv?: string | undefined;
  /** `chart.png` of a chart, when Chromium rendered it. */
  readonly png?: string | undefined;
}

/** Writes browsable files for the artifacts a message refers to. */
export interface ArtifactMaterializer {
  /**
   * Scan `text` for artifact URIs and write each of the user's artifacts to `<dir>/<id>/`. URIs that are not
   * the user's (or do not exist) are skipped and logged; nothing throws for one bad artifact.
   */
  materialize(scope: ArtifactCallScope, text: string): Promise<MaterializedArtifact[]>;
  /** Write one artifact (already loaded). */
  write(artifact: Artifact): Promise<MaterializedArtifact>;
  /** The folder an artifact id is written to. */
  dirFor(id: string): string;
  /** Close the headless browser, if one was started. */
  close(): Promise<void>;
}

function writeAtomic(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode: PRIVATE_FILE_MODE });
  renameSync(tmp, file);
}

/**
 * The turn-end materializer: for every `chart://`, `report://` and `spreadsheet://` URI in the final message it
 * writes `<dir>/<id>/index.html` (a self-contained viewer), `artifact.json`, `data.csv` for a spreadsheet and
 * `chart.png` for a chart when headless Chromium is available (else it logs `chart_png_skipped` and goes on).
 * The browser starts on the first chart and stays up until `close()`.
 *
 * @example
 * ```ts
 * const materializer = createArtifactMaterializer({ store: artifacts, dir: `${dataDir}/artifacts` });
 * const written = await materializer.materialize({ userId: 'u1' }, 'Here it is: chart://x-…');
 * console.log(written[0]?.html); // …/artifacts/x-…/index.html
 * ```
 */
export function createArtifactMaterializer(options: ArtifactMaterializerOptions): ArtifactMaterializer {
  if (!options || typeof options.store?.find !== 'function') throw new MinaraError('CONFIG_INVALID', 'createArtifactMaterializer: "store" must be an ArtifactStore.');
  if (typeof options.dir !== 'string' || options.dir === '') throw new MinaraError('CONFIG_INVALID', 'createArtifactMaterializer: "dir" must be a directory path.');
  const { store, png = 'auto', logger = createConsoleLogger({ level: 'warn' }) } = options;
  const dir = path.resolve(options.dir);
  const chromiumPath = options.chromiumPath;
  let renderer: Promise<ChartPngRenderer | { readonly unavailable: string }> | undefined;

  const dirFor = (id: string): string => {
    if (!ARTIFACT_ID.test(id)) throw new MinaraError('INVALID_ARGUMENT', `materializer: ${JSON.stringify(id)} is not an artifact id.`);
    return path.join(dir, id);
  };

  async function chartPng(artifact: Artifact, html: string, file: string): Promise<string | undefined> {
    if (png === false) return undefined;
    renderer ??= launchChartPngRenderer({ executablePath: chromiumPath });
    const r = await renderer;
    if ('unavailable' in r) {
      logger.info('chart_png_skipped', { id: artifact.id, reason: r.unavailable });
      return undefined;
    }
    try {
      writeAtomic(file, await r.render(html));
      return file;
    } catch (error) {
      logger.warn('chart_png_skipped', { id: artifact.id, reason: error instanceof Error ? error.message.split('\n')[0] : String(error) });
      return undefined;
    }
  }

  async function write(artifact: Artifact): Promise<MaterializedArtifact> {
    const folder = dirFor(artifact.id);
    mkdirSync(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
    const isChart = artifact.kind === 'chart' && artifact.status === 'completed';
    const csv = artifact.kind === 'spreadsheet' && artifact.data ? path.join(folder, 'data.csv') : undefined;
    const json = path.join(folder, 'artifact.json');
    const pngFile = path.join(folder, 'chart.png');
    const links = { json: 'artifact.json', ...(csv ? { csv: 'data.csv' } : {}) };
    writeAtomic(json, `${JSON.stringify(artifact, null, 2)}\n`);
    if (csv && artifact.kind === 'spreadsheet' && artifact.data) writeAtomic(csv, artifact.data.csvContent);
    const html = path.join(folder, 'index.html');
    let pngPath: string | undefined;
    if (isChart) {
      // The PNG is rendered from the page without links, then the page is written with its link.
      pngPath = await chartPng(artifact, renderArtifactHtml(artifact, { links }), pngFile);
    }
    writeAtomic(html, renderArtifactHtml(artifact, { links: { ...links, ...(pngPath ? { png: 'chart.png' } : {}) } }));
    return { id: artifact.id, uri: artifact.uri, kind: artifact.kind, dir: folder, html, json, ...(csv ? { csv } : {}), ...(pngPath ? { png: pngPath } : {}) };
  }

  return {
    async materialize(scope, text) {
      const out: MaterializedArtifact[] = [];
      for (const ref of findArtifactUris(text ?? '')) {
        try {
          const artifact = await store.find(scope, ref.uri);
          if (!artifact) {
            logger.warn('artifact_not_materialized', { uri: ref.uri, reason: 'not found for this user' });
            continue;
          }
          out.push(await write(artifact));
        } catch (error) {
          logger.error('artifact_not_materialized', { uri: ref.uri, error: error instanceof Error ? error.message : String(error) });
        }
      }
      return out;
    },
    write,
    dirFor,
    async close() {
      const r = await renderer;
      renderer = undefined;
      if (r && !('unavailable' in r)) await r.close();
    },
  };
}
