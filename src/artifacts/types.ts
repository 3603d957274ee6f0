import type { ArtifactKind, ArtifactQuery, ArtifactStatus } from '../storage/artifact-types';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';
import type { ChartLimits } from './chart';

/** Who an artifact is made for, and where (session and turn are recorded when known). */
export interface ArtifactCallScope {
  readonly userId: string;
  readonly sessionId?: string | undefined;
  readonly turnId?: string | undefined;
}

/** A chart's payload: the Vega-Lite spec (title applied) and the Vega spec it compiles to. */
export interface ChartArtifactData {
  readonly spec: Readonly<Record<string, unknown>>;
  readonly vega: Readonly<Record<string, unknown>>;
  readonly description?: string | undefined;
  readonly dataPoints: number;
}

/** A report's payload: markdown. */
export interface ReportArtifactData {
  readonly markdown: string;
}

/** A spreadsheet's payload: CSV text plus its shape. */
export interface SpreadsheetArtifactData {
  readonly csvContent: string;
  readonly description?: string | undefined;
  readonly rows: number;
  readonly columns: number;
}

/** The fields every artifact type shares (id, URI, title, status, session, times). */
export interface ArtifactBase {
  readonly id: string;
  /** `chart://x-…`, `report://r-…` or `spreadsheet://x-…`: how the model and the user refer to it. */
  readonly uri: string;
  readonly userId: string;
  readonly status: ArtifactStatus;
  readonly title?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly turnId?: string | undefined;
  readonly error?: string | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** One artifact with its payload decoded (present once `completed`). */
export type Artifact =
  | (ArtifactBase & { readonly kind: 'chart'; readonly data?: ChartArtifactData | undefined })
  | (ArtifactBase & { readonly kind: 'report'; readonly data?: ReportArtifactData | undefined })
  | (ArtifactBase & { readonly kind: 'spreadsheet'; readonly data?: SpreadsheetArtifactData | undefined });

/** Input of {@link ArtifactStore.createChart}. */
export interface CreateChartInput {
  readonly title: string;
  /** A Vega-Lite spec with inline data (`data.values`). */
  readonly spec: Readonly<Record<string, unknown>>;
  readonly description?: string | undefined;
}

/** Input of {@link ArtifactStore.createReport}. */
export interface CreateReportInput {
  readonly title: string;
  readonly markdown: string;
}

/** Input of {@link ArtifactStore.createSpreadsheet}. */
export interface CreateSpreadsheetInput {
  readonly csvContent: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
}

/** Options of {@link createArtifactStore}. */
export interface ArtifactStoreOptions {
  readonly storage: Storage;
  /** Chart limits (spec bytes, data rows). @default DEFAULT_CHART_LIMITS */
  readonly chartLimits?: Partial<ChartLimits> | undefined;
  /** Longest report, in characters. @default 200000 */
  readonly maxReportChars?: number | undefined;
  /** Largest spreadsheet CSV, in bytes. @default 5000000 */
  readonly maxCsvBytes?: number | undefined;
  /** @default a console logger at `warn` */
  readonly logger?: Logger | undefined;
  /** @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** New artifact ids. @default newArtifactId */
  readonly generateId?: ((kind: ArtifactKind) => string) | undefined;
}

/**
 * The artifact store: builders that walk one status path (`running` → `completed` | `error`) and reads by id
 * or URI, all scoped to a user.
 */
export interface ArtifactStore {
  /** Check and compile a Vega-Lite spec, then store it. Throws `ARTIFACT_INVALID` naming the field (the row is left in `error`). */
  createChart(scope: ArtifactCallScope, input: CreateChartInput): Promise<Artifact>;
  createReport(scope: ArtifactCallScope, input: CreateReportInput): Promise<Artifact>;
  /** Check the CSV parses (same column count per row) and store it. */
  createSpreadsheet(scope: ArtifactCallScope, input: CreateSpreadsheetInput): Promise<Artifact>;
  /** The artifact by id or URI; throws `ARTIFACT_NOT_FOUND` (listing the user's recent URIs) when it is missing or another user's. */
  get(scope: ArtifactCallScope, idOrUri: string): Promise<Artifact>;
  /** Like `get`, but undefined instead of throwing. */
  find(scope: ArtifactCallScope, idOrUri: string): Promise<Artifact | undefined>;
  list(scope: ArtifactCallScope, query?: ArtifactQuery): Promise<Artifact[]>;
}
