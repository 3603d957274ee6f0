import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import { err, ok, type ToolEnvelope } from '../tools/envelope';
import type { ToolEntry, ToolExecutionContext, ToolRegistry } from '../tools/types';
import type { SkillRegistry } from './registry';
import { ACTIVATE_SKILLS_TOOL, type SkillSession, TOOL_INVOKE_TOOL } from './session';

/** Options of {@link createSkillMetaTools}: one session, or a resolver per call (per conversation). */
export type SkillMetaToolsOptions = {
  readonly skills: SkillRegistry;
  /** The tool registry `tool_invoke` dispatches through. @default skills.tools */
  readonly tools?: ToolRegistry | undefined;
} & (
  | { readonly session: SkillSession; readonly resolveSession?: undefined }
  | { readonly resolveSession: (ctx: ToolExecutionContext) => SkillSession | undefined; readonly session?: undefined }
);

/** The two meta-tools, ready to register. */
export interface SkillMetaTools {
  readonly activateSkills: ToolEntry;
  readonly toolInvoke: ToolEntry;
  /** Both, for `tools.register(metaTools.all)`. */
  readonly all: readonly ToolEntry[];
}

const META = new Set([ACTIVATE_SKILLS_TOOL, TOOL_INVOKE_TOOL]);

/**
 * Create `activate_skills` and `tool_invoke` (tier READ_ONLY, tool set `skills`).
 *
 * - `activate_skills(ids, confirmed?)` replaces the loaded set through `SkillSession.activate`. It
 *   loads playbook prose only: it never asks the user, never runs a risk gate, and `confirmed` changes
 *   nothing (kept for compatibility). The one refusal: a sandbox-class skill from an autonomous source
 *   unless the turn is operator-authored.
 * - `tool_invoke({ name, args })` reaches any registered tool through `ToolRegistry.dispatch` with the
 *   caller's own context, so the tier gate, hooks and audit see the original source. It refuses to
 *   invoke the meta-tools themselves.
 *
 * @example
 * ```ts
 * const meta = createSkillMetaTools({ skills, session });
 * tools.register(meta.all);
 * ```
 */
export function createSkillMetaTools(options: SkillMetaToolsOptions): SkillMetaTools {
  const { skills } = options;
  const tools = options.tools ?? skills.tools;
  const resolve = (ctx: ToolExecutionContext): SkillSession | undefined => options.session ?? options.resolveSession?.(ctx);

  const activateSkills = defineTool({
    name: ACTIVATE_SKILLS_TOOL,
    toolSet: 'skills',
    description:
      'Load the playbooks and tools of the skills this request needs (ids from the skills catalog). Each call replaces the loaded set; pass [] to unload. Activation does not authorise anything: tools still run through their permission tiers.',
    inputSchema: z.object({
      ids: z.array(z.string().min(1).max(100)).max(32).describe('Skill ids from the catalog'),
      confirmed: z.boolean().nullish().describe('Ignored: activation never needs confirmation'),
    }),
    permissionTier: PermissionTier.READ_ONLY,
    execute: ({ ids }, ctx) => {
      const session = resolve(ctx);
      if (!session) return err('No skill session is attached to this conversation.', { code: 'SKILL_ACTIVATION_REFUSED', retryable: false });
      try {
        const r = session.activate(ids, {
          source: ctx.call.source,
          operatorAuthored: ctx.call.operatorAuthored === true,
          via: 'model',
          traceId: ctx.call.traceId,
        });
        return ok({ active: r.active, shed: r.shed, added: r.added, removed: r.removed, tools: r.tools });
      } catch (error) {
        if (MinaraError.isInstance(error)) return err(error.message, { code: error.code, retryable: error.code === 'SKILL_NOT_FOUND' });
        throw error;
      }
    },
  });

  const toolInvoke = defineTool({
    name: TOOL_INVOKE_TOOL,
    toolSet: 'skills',
    description:
      'Call any registered tool by name, including tools not in your current list. The call goes through the same permission tiers, confirmations and audit as a direct call.',
    inputSchema: z.object({
      name: z.string().min(1).max(128).describe('Tool name'),
      args: z.record(z.string(), z.unknown()).nullish().describe('Tool input object'),
    }),
    permissionTier: PermissionTier.READ_ONLY,
    execute: async ({ name, args }, ctx) => {
      if (META.has(name)) {
        return err(`tool_invoke cannot call "${name}"; call it directly.`, { code: 'TOOL_BLOCKED', retryable: false });
      }
      const outcome = await tools.dispatchDetailed(name, args ?? {}, {
        // The context the gate saw for this tool_invoke call (the ambient turn context): same source.
        context: ctx.call,
        toolCallId: `${ctx.toolCallId}:${name}`,
        signal: ctx.signal,
      });
      return rebrand(outcome.envelope);
    },
  });

  return { activateSkills, toolInvoke, all: [activateSkills, toolInvoke] };
}

/** Pass the inner envelope through unchanged (re-made so the registry does not wrap it again). */
function rebrand(envelope: ToolEnvelope): ToolEnvelope {
  if (envelope.ok) return ok(envelope.data);
  const e = err(envelope.error, { code: envelope.code, retryable: envelope.retryable });
  return envelope.approval ? Object.assign(e, { approval: envelope.approval }) : e;
}
