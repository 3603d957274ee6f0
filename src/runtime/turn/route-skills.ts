import { applySignalPreload } from '../../skills/signals';
import { createSkillSession, type SkillSession } from '../../skills/session';
import type { RoutedCatalogEntry } from '../../skills/types';
import type { ToolCallContext } from '../../tools/types';
import type { SessionState } from '../session-state';
import type { RunInput } from '../types';
import type { Emit, TurnDeps } from './types';

/** What routing produced for the prompt. */
export interface RoutedSkills {
  readonly skillSession: SkillSession | undefined;
  readonly routed: RoutedCatalogEntry[];
  readonly scenarioPlaybook: string | undefined;
  /** The L0.5 scenario the message was classified into (decision capture records it with the turn's trades). */
  readonly scenarioId: string | undefined;
}

/**
 * Part of stage 2, prepare and route: restore the session's loaded skills, route the message, then apply the
 * signal and scenario preloads. Without a skill registry nothing is routed.
 */
export function routeSkills(deps: TurnDeps, input: RunInput, ctx: ToolCallContext, state: SessionState, emit: Emit): RoutedSkills {
  const { options } = deps;
  const source = ctx.source;
  let skillSession: SkillSession | undefined;
  let routed: RoutedCatalogEntry[] = [];
  let scenarioPlaybook: string | undefined;
  let scenarioId: string | undefined;
  if (options.skills) {
    skillSession = deps.liveSkillSessions.get(ctx.sessionId);
    if (!skillSession) {
      skillSession = createSkillSession({ registry: options.skills });
      deps.liveSkillSessions.set(ctx.sessionId, skillSession);
      const restorable = state.activeSkills.filter((id) => options.skills!.has(id));
      if (restorable.length > 0) skillSession.activate(restorable, { source, operatorAuthored: true, via: 'host', traceId: ctx.traceId });
    }
    routed = options.skills.route({ message: input.message ?? '', source, ...(input.signal ? { signal: input.signal } : {}) });
    if (input.signal) {
      const pre = applySignalPreload(skillSession, input.signal, { operatorAuthored: ctx.operatorAuthored === true });
      if (pre.activation) emit({ type: 'skill-activated', skillIds: pre.activation.active, via: 'signal', shed: pre.activation.shed });
    }
    const scenario = input.message ? options.scenarios?.classify(input.message, { source }) : undefined;
    if (scenario) {
      scenarioId = scenario.id;
      scenarioPlaybook = `## Scenario: ${scenario.id}\n${scenario.playbook}`;
      const ids = (scenario.preloadSkills ?? []).filter((id) => options.skills!.has(id));
      const merged = [...new Set([...skillSession.activeIds(), ...ids])];
      if (ids.length > 0 && merged.length !== skillSession.activeIds().length) {
        try {
          const r = skillSession.activate(merged, { source, operatorAuthored: ctx.operatorAuthored === true, via: 'host', traceId: ctx.traceId });
          emit({ type: 'skill-activated', skillIds: r.active, via: 'scenario', shed: r.shed });
        } catch (error) {
          deps.logger.warn('scenario preload refused', { scenario: scenario.id, error: error instanceof Error ? error.message : String(error) });
        }
      }
    }
  }
  return { skillSession, routed, scenarioPlaybook, scenarioId };
}

/** The routing block of the dynamic tail: the top skills that match the message and why. */
export function renderRouting(routed: readonly RoutedCatalogEntry[]): string | undefined {
  const top = routed.filter((r) => r.reasons.length > 0).slice(0, 5);
  if (top.length === 0) return undefined;
  return `## Skills that match this message\n${top.map((r) => `- ${r.id} (${r.reasons.join(', ')})`).join('\n')}\nActivate the ones the request needs with activate_skills.`;
}
