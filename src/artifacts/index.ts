export { createArtifactStore, toArtifact } from './artifact-store';
export { compileChart, type ChartLimits, type CompiledChart, DEFAULT_CHART_LIMITS } from './chart';
export { createArtifactMaterializer, type ArtifactMaterializer, type ArtifactMaterializerOptions, type MaterializedArtifact } from './materializer';
export { CHROMIUM_PATHS, type ChartPngRenderer, launchChartPngRenderer } from './png';
export { ARTIFACT_TOOL_NAMES, type ArtifactToolsOptions, createArtifactTools } from './tools';
export type {
  Artifact, ArtifactBase, ArtifactCallScope, ArtifactStore, ArtifactStoreOptions, ChartArtifactData, CreateChartInput, CreateReportInput, CreateSpreadsheetInput, ReportArtifactData, SpreadsheetArtifactData,
} from './types';
export { ARTIFACT_ID, ARTIFACT_ID_PREFIX, type ArtifactReference, artifactUri, findArtifactUris, newArtifactId, parseArtifactRef } from './uri';
export { type ArtifactHtmlOptions, escapeHtml, jsonForScript, markdownToHtml, renderArtifactHtml, VIEWER_CSP } from './viewer';
