/**
 * The agent in the backtest loop (issue 40): model cassettes, costs, contamination, point-in-time runs of the
 * real runtime. Re-exported by `@minara/agent/backtest`.
 *
 * @module
 */
export { canonicalHash, canonicalJson, canonicalize } from './canonical-json';
export {
  cassetteKey,
  cassetteRequest,
  createCassetteModel,
  loadCassette,
  normaliseGeneratedIds,
  type CassetteEntry,
  type CassetteFile,
  type CassetteMode,
  type CassetteModel,
  type CassetteModelOptions,
  type CassetteRequest,
} from './cassette';
export { createIntentTrading, createPointInTimeMarket, type IntentTrading, type ViewSource } from './adapters';
export { createAgentStrategy, type AgentStrategy, type AgentStrategyOptions, type ApprovalPolicy } from './agent-strategy';
export { createCostLedger, type CostLedger, type DecisionCost } from './costs';
export {
  anonymiseBars,
  contaminationReport,
  DEFAULT_TRAINING_CUTOFFS,
  trainingCutoffFor,
  type AnonymiseMapping,
  type AnonymiseOptions,
  type ContaminationReport,
} from './contamination';
export type { AgentDecision, BlockedAgentOrder } from './decision-log';
export type { DecisionContext } from './prompt-log';
export { scheduleHistory, type HistoryItem, type HistoryReleaser } from './history';
export { compileSchedule, type AgentSchedule } from './schedule';
export { BACKTEST_TOOL_SETS, DISABLED_FEATURES, POINT_IN_TIME_TOOLS, type DisabledTool } from './tool-policy';
export { anonymiseBarSet, runAgentBacktest, runLearningComparison, withCallSettings, type AgentBacktestOptions, type AgentBacktestResult, type LearningComparison } from './run';
export { compareRuns, formatComparison, type DecisionDiff, type MetricDelta, type RunComparison } from './compare';
export { metricSpread, welchInterval, type MetricSpread } from './stats';
export { planSweep, runSweepWorker, sweepResults, type SweepCell, type SweepPlanOptions, type SweepRow, type SweepWorkerOptions, type SweepWorkerResult } from './sweep';
export { renderAgentDecisionsHtml } from './decisions-html';
