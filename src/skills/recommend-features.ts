import { z } from 'zod';
import { PermissionTier, permissionTierName } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import type { SkillRegistry } from './registry';

/** Options of {@link createRecommendFeaturesTool}. */
export interface RecommendFeaturesOptions {
  /** The skill registry (and through it the tool registry); a function when it is made after the tool. */
  readonly skills: SkillRegistry | (() => SkillRegistry | undefined);
  /** Skills listed at most. @default 5 */
  readonly maxSkills?: number | undefined;
}

/**
 * `recommend_features` (tool set `session`, READ_ONLY, baseline): points the user at what this agent can do. With a
 * `topic` ("chart my portfolio", "automate buying") it routes the topic through the L0 skill router and returns the
 * matching skills with why they matched, their tools and those tools' tiers (so the model can say what needs a
 * confirmation); without one it lists the auto-activated skills and the tool sets. Everything comes from the live
 * registries, so a feature that is not configured here (no search provider, no e2b key) is never suggested.
 */
export function createRecommendFeaturesTool(options: RecommendFeaturesOptions): ToolEntry {
  const resolve = typeof options.skills === 'function' ? options.skills : () => options.skills as SkillRegistry;
  const maxSkills = options.maxSkills ?? 5;
  return defineTool({
    name: 'recommend_features',
    toolSet: 'session',
    description:
      'What can this agent do for the user? Give a topic ("research a token", "automate DCA") to get the matching skills and tools (with which need confirmation), ' +
      'or no topic for an overview. Use it when the user asks what you can do or seems unaware of a feature that fits.',
    inputSchema: z.object({ topic: z.string().trim().min(2).max(300).nullish() }),
    permissionTier: PermissionTier.READ_ONLY,
    execute: ({ topic }) => {
      const skills = resolve();
      if (!skills) return { skills: [], toolSets: [], note: 'No skills are registered.' };
      const registry = skills.tools;
      const toolInfo = (name: string) => {
        const t = registry.get(name);
        return t ? { name, tier: permissionTierName(t.permissionTier), description: t.description.split(/(?<=\.)\s/)[0]!.slice(0, 160) } : undefined;
      };
      const describeSkill = (id: string, reasons?: readonly string[]) => {
        const s = skills.get(id)!;
        return {
          id,
          description: s.description,
          ...(reasons && reasons.length > 0 ? { matched: reasons } : {}),
          tools: s.toolNames.flatMap((n) => toolInfo(n) ?? []),
        };
      };
      if (topic) {
        const routed = skills.route({ message: topic }).filter((r) => r.reasons.length > 0).slice(0, maxSkills);
        return {
          topic,
          skills: routed.map((r) => describeSkill(r.id, r.reasons)),
          ...(routed.length === 0 ? { note: 'No skill matches this topic; offer the overview (call without a topic) or answer directly.' } : {}),
        };
      }
      const sets = new Map<string, string[]>();
      for (const t of registry.list()) sets.set(t.toolSet, [...(sets.get(t.toolSet) ?? []), t.name]);
      return {
        skills: skills.list().filter((s) => s.activation === 'auto').map((s) => ({ id: s.id, description: s.description })),
        toolSets: registry.toolSets().filter((s) => sets.has(s.name)).map((s) => ({ name: s.name, description: s.description, tools: sets.get(s.name)! })),
      };
    },
  });
}
