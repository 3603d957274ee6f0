import type { AgentEvent } from '../events';
import type { MemoryStore } from '../../memory/types';
import type { SkillSession } from '../../skills/session';
import type { Workspace } from '../../workspace/workspace';
import type { PromptBlock } from '../prompt-blocks';
import type { ResolvedRuntimeOptions, TurnScope } from '../types';

/** Everything a turn needs, resolved once by `createAgentRuntime`. */
export interface TurnDeps {
  readonly options: ResolvedRuntimeOptions;
  /** The workspace of a tenant (the one workspace, or `options.workspace(scope)`). */
  readonly workspaceFor: (scope: TurnScope) => Workspace | undefined;
  /** The model the turn calls: `options.model` behind the tool-input guard. */
  readonly model: ResolvedRuntimeOptions['model'];
  readonly now: () => Date;
  readonly generateId: (prefix: string) => string;
  readonly maxSteps: number;
  readonly turnTokenBudget: number;
  readonly cronAllowedToolSets: readonly string[];
  readonly defaultUserId: string;
  readonly memoryFor: (scope: TurnScope) => MemoryStore | undefined;
  /** Live skill sessions by session id, so `activate_skills` finds the turn's session. */
  readonly liveSkillSessions: Map<string, SkillSession>;
  readonly logger: { warn(m: string, f?: Record<string, unknown>): void; error(m: string, f?: Record<string, unknown>): void };
}

/** The prompt of a turn, exposed for `runtime.buildSystemPrompt` and `--dump-prompt`. */
export interface TurnPrompt {
  readonly blocks: PromptBlock[];
  readonly toolNames: string[];
}

/** How events leave a turn. */
export type Emit = (e: AgentEvent) => void;
