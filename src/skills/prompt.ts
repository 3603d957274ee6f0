import type { Skill } from './types';

/** Per-turn budget for active skill bodies (~3,000 tokens). */
export const SKILL_BODY_BUDGET_CHARS = 12_000;

/** Active skill bodies as they go into the prompt. */
export interface SkillPromptResult {
  /** The concatenated bodies (empty when nothing fits or nothing is active). */
  readonly text: string;
  /** Ids whose bodies are in `text`, in prompt order. */
  readonly included: readonly string[];
  /** Active ids whose bodies were shed for budget (their tools stay callable). */
  readonly shed: readonly string[];
  /** Characters of body counted against the budget. */
  readonly usedChars: number;
}

/** Rank for the budget: most important first (priority asc, then id). */
export function compareByImportance(a: Skill, b: Skill): number {
  return a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Concatenate active bodies in importance order while they fit `budgetChars`; once one does not fit,
 * it and every lower-priority body are shed (lowest priority goes first). The result does not depend
 * on the order the ids were activated in.
 */
export function assembleSkillPrompt(skills: readonly Skill[], budgetChars: number = SKILL_BODY_BUDGET_CHARS): SkillPromptResult {
  const ordered = [...new Map(skills.map((s) => [s.id, s] as const)).values()].sort(compareByImportance);
  const included: string[] = [];
  const shed: string[] = [];
  const parts: string[] = [];
  let used = 0;
  for (const s of ordered) {
    if (shed.length === 0 && used + s.prompt.length <= budgetChars) {
      used += s.prompt.length;
      included.push(s.id);
      parts.push(renderBody(s));
    } else shed.push(s.id);
  }
  return { text: parts.join('\n\n'), included, shed, usedChars: used };
}

function renderBody(s: Skill): string {
  const head = `## Skill: ${s.id}`;
  const refs =
    s.references.length > 0
      ? `\n\nReference files (read on demand):\n${s.references.map((r) => `- ${r.name}: ${r.path}`).join('\n')}`
      : '';
  return `${head}\n${s.prompt}${refs}`;
}
