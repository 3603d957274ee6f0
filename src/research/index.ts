export { type CodeSandbox, type CodeSandboxLimits, type CodeSandboxResult, createQuickJsSandbox, type QuickJsSandboxOptions } from './quickjs-sandbox';
export { createE2bSandbox, type E2bSandboxOptions } from './e2b-sandbox';
export { createRunCodeTools, type RunCodeToolsOptions } from './run-code';
export { checkCitations, citationNumbers, type CitationProblem, claimBlocks, createResearchReportTool, type ResearchReportToolOptions } from './report-tool';
export {
  createMethodologyLensTool, type MethodologyLensOptions,
} from './research-tools';
export {
  analysisDefinition, codeAnalysisDefinition, createResearchSkills, deepResearchDefinition, memoryAlertsDefinition, RESEARCH_SKILL_DEFINITIONS,
} from './skills';
