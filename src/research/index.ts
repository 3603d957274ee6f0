export { type CodeSandbox, type CodeSandboxLimits, type CodeSandboxResult, createQuickJsSandbox, type QuickJsSandboxOptions } from './quickjs-sandbox';
export { createE2bSandbox, type E2bSandboxOptions } from './e2b-sandbox';
export { createRunCodeTools, type RunCodeToolsOptions } from './run-code';
