import { describe, expect, it } from 'vitest';
import { main } from './index';

describe('examples/custom-skill', () => {
  it('loads a TypeScript skill and a SKILL.md package, routes to each, and activates one in a turn', async () => {
    const { skills, loaded, routes, turn, model } = await main({ log: () => {} });
    expect(loaded.issues).toEqual([]);
    expect(skills.list().map((s) => s.id).sort()).toEqual(['dca.planner', 'fx.desk']);
    const dca = skills.get('dca.planner')!;
    expect(dca.toolNames).toEqual(['get_price']);
    expect(dca.prompt).toContain('dollar-cost averaging');
    expect(routes.fx[0]?.id).toBe('fx.desk');
    expect(routes.dca[0]?.id).toBe('dca.planner');
    expect(turn.text).toBe('BTC is $97,000. How much per week, and for how long?');
    expect(turn.events.find((e) => e.type === 'tool-result' && e.toolName === 'activate_skills')).toMatchObject({ output: { ok: true } });
    expect(turn.events.find((e) => e.type === 'tool-result' && e.toolName === 'get_price')).toMatchObject({ output: { ok: true } });
    model.assertConsumed();
  });
});
