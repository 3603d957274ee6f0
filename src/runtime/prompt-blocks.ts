import type { SystemModelMessage } from 'ai';

/** Names of the system prompt blocks, in the order they are sent. */
export type PromptBlockId =
  | 'identity'
  | 'skill-catalog'
  | 'memory-snapshot'
  | 'workspace'
  | 'bootstrap'
  | 'notices'
  | 'learning'
  | 'scenario'
  | 'active-skills'
  | 'routing'
  | 'signal'
  | 'pending-approvals'
  | 'turn-notes';

/** One system prompt block. `cache: true` blocks form the stable prefix and carry a cache breakpoint. */
export interface PromptBlock {
  readonly id: PromptBlockId;
  readonly text: string;
  readonly cache: boolean;
}

/** The inputs of {@link buildSystemPromptBlocks}; every field is optional text, empty means absent. */
export interface PromptBlockInput {
  /** Identity: SOUL + AGENTS (or the built-in skeleton) + runtime rules. Cached. */
  readonly identity: string;
  /** The unrouted skill catalog: stable while the registered skills are. Cached. */
  readonly skillCatalog?: string | undefined;
  /** The frozen `<memory-context>` snapshot, loaded once per session. Cached (session-stable). */
  readonly memorySnapshot?: string | undefined;
  /** Workspace dynamic files: USER, MEMORY, HEARTBEAT, recent journal. */
  readonly workspace?: string | undefined;
  /** First-run instructions while BOOTSTRAP.md exists. */
  readonly bootstrap?: string | undefined;
  /** One-time notices (e.g. SOUL.md changed). */
  readonly notices?: readonly string[] | undefined;
  /** Learned methodologies and preferences relevant to this turn (after the workspace, which wins on conflict). */
  readonly learning?: string | undefined;
  /** The playbook of the scenario classified for this turn. */
  readonly scenario?: string | undefined;
  /** Prompt bodies of the active skills (within the body budget). */
  readonly activeSkills?: string | undefined;
  /** Routing hints for this message (skill ids with their reasons). */
  readonly routing?: string | undefined;
  /** The signal context of a cron or webhook turn. */
  readonly signal?: string | undefined;
  /** Approvals waiting for the user. */
  readonly pendingApprovals?: string | undefined;
  /** Anything else the host adds for this turn. */
  readonly turnNotes?: string | undefined;
}

/**
 * Assemble the system prompt from declared blocks, in the load-bearing order: the cached prefix
 * (identity, skill catalog, frozen memory snapshot), then the dynamic tail (workspace, bootstrap,
 * notices, learned methodologies and preferences, scenario, active skills, routing hints, signal, pending approvals). Empty blocks are left out.
 * Same input, byte-identical output.
 *
 * @example
 * ```ts
 * const blocks = buildSystemPromptBlocks({ identity, skillCatalog, memorySnapshot: snapshot.text });
 * streamText({ model, instructions: toInstructions(blocks), messages });
 * ```
 */
export function buildSystemPromptBlocks(input: PromptBlockInput): PromptBlock[] {
  const blocks: PromptBlock[] = [];
  const add = (id: PromptBlockId, text: string | undefined, cache: boolean) => {
    if (text !== undefined && text.trim() !== '') blocks.push({ id, text: text.trimEnd(), cache });
  };
  add('identity', input.identity, true);
  add('skill-catalog', input.skillCatalog, true);
  add('memory-snapshot', input.memorySnapshot, true);
  add('workspace', input.workspace, false);
  add('bootstrap', input.bootstrap, false);
  add('notices', input.notices && input.notices.length > 0 ? `## Notices\n${input.notices.map((n) => `- ${n}`).join('\n')}` : undefined, false);
  add('learning', input.learning, false);
  add('scenario', input.scenario, false);
  add('active-skills', input.activeSkills, false);
  add('routing', input.routing, false);
  add('signal', input.signal, false);
  add('pending-approvals', input.pendingApprovals, false);
  add('turn-notes', input.turnNotes, false);
  return blocks;
}

/** Anthropic allows at most four cache breakpoints per request. */
export const MAX_CACHE_BREAKPOINTS = 4;

/**
 * Turn blocks into AI SDK `instructions`: one system message per block, with an Anthropic cache breakpoint
 * on each cached block (at most `maxBreakpoints`, later cached blocks lose theirs first). Other providers
 * ignore the Anthropic options.
 */
export function toInstructions(blocks: readonly PromptBlock[], options: { maxBreakpoints?: number } = {}): SystemModelMessage[] {
  const { maxBreakpoints = MAX_CACHE_BREAKPOINTS - 1 } = options;
  let used = 0;
  return blocks.map((block) => {
    if (block.cache && used < maxBreakpoints) {
      used++;
      return { role: 'system', content: block.text, providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } };
    }
    return { role: 'system', content: block.text };
  });
}

/** The plain system prompt (for `--dump-prompt` and `/prompt`): blocks joined by a blank line. */
export function renderSystemPrompt(blocks: readonly PromptBlock[]): string {
  return blocks.map((b) => b.text).join('\n\n');
}
