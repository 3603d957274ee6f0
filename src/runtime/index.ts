/**
 * The agent runtime: the turn pipeline on AI SDK 7, prompt blocks, compaction, workflows and signals.
 *
 * @module
 */
export { createAgentRuntime, type AgentRuntime, DEFAULT_RUNTIME_CLOSE_TIMEOUT_MS } from './runtime';
export type { AgentRuntimeOptions, ApprovalDecision, ResolvedRuntimeOptions, GenerateResult, RunInput, ScenarioClassifier, ScenarioMatch, TurnScope, TurnStartInfo, TurnSummary, TurnToolCall } from './types';
export type { PostTurnRecord, TurnExecution, TurnExecutionFill, TurnLearning, TurnLearningContext } from './types';
export { type AgentEvent, type AgentEventType, type PendingApproval, type TurnStopReason, type TurnUsage } from './events';
export {
  buildSystemPromptBlocks,
  MAX_CACHE_BREAKPOINTS,
  type PromptBlock,
  type PromptBlockId,
  type PromptBlockInput,
  renderSystemPrompt,
  toInstructions,
} from './prompt-blocks';
export { buildIdentityText, DEFAULT_IDENTITY, RUNTIME_RULES } from './identity';
export { COMPACTION_MARKER, compactMessages, type CompactionOptions, type CompactionResult } from './compaction';
export { estimateTokens, INTERRUPTED_ENVELOPE, repairOrphanedToolCalls } from './conversation';
export {
  type AgentTurnStep,
  runWorkflow,
  type ToolCallStep,
  validateWorkflow,
  type WorkflowDefinition,
  type WorkflowResult,
  type WorkflowResults,
  type WorkflowStep,
  type WorkflowStepResult,
  type WorkflowRunOptions,
} from './workflows';
export {
  formatWorkflowIssues,
  parseWorkflowFile,
  type ParseWorkflowFileOptions,
  WORKFLOW_NAME,
  type WorkflowFileIssue,
  workflowFromSpec,
  type WorkflowSpec,
  type WorkflowSpecStep,
} from './workflow-file';
export { type StartedWorkflowRun, startStoredWorkflow, type StoredWorkflowOptions, toStoredStep } from './workflow-runs';
export { createScheduler, type ScheduledJob, type Scheduler, type SchedulerOptions, type SchedulerTickResult, signalJob } from './scheduler';
export { type CronOptions, type CronSchedule, parseCron, resolveTimeZone } from './cron';
export { createDelegateTool, type DelegateToolOptions } from './delegate';
export {
  createUIStreamEncoder,
  type MinaraDataEventType,
  type MinaraDataParts,
  type MinaraUIMessage,
  type MinaraUITools,
  toUIMessages,
  toUIMessageStream,
  toUIMessageStreamResponse,
  type ToUIMessageStreamOptions,
  type UIStreamEncoder,
  type UIStreamEncoderOptions,
} from './ui-stream';
