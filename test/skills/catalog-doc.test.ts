import { describe, expect, it } from 'vitest';
import { defineSkill, renderSkillsCatalogPage } from '@minara/agent';

const core = defineSkill({
  id: 'minara.core',
  description: 'Unified Minara API: markets, portfolio | spot',
  prompt: 'p',
  toolNames: ['get_price'],
  priority: 20,
  routing: { keywords: ['price', '价格'], lifecycleStages: ['discover'] },
  conditions: { requiresEnv: ['MINARA_API_KEY'] },
});
const ext = defineSkill({
  id: 'deep-research',
  description: 'Deep research',
  prompt: 'p',
  summary: 'Plan, search, cite.',
  origin: { kind: 'external', file: '/x/SKILL.md', license: 'GPL-3.0', copyleft: true },
});
const sandbox = defineSkill({ id: 'workspace.e2b', description: 'Cloud sandbox', prompt: 'p', sandbox: true, priority: 90 });

describe('renderSkillsCatalogPage', () => {
  it('renders sections, tables and details, escaping table cells', () => {
    const page = renderSkillsCatalogPage([ext, sandbox, core]);
    expect(page).toContain('3 skills.');
    expect(page).toContain('## Built-in skills');
    expect(page).toContain('| `minara.core` | Unified Minara API: markets, portfolio \\| spot | 20 | 1 |');
    expect(page.indexOf('`minara.core`')).toBeLessThan(page.indexOf('`workspace.e2b`'));
    expect(page).toContain('- **Keywords:** `price`, `价格`');
    expect(page).toContain('- **Requires:** env `MINARA_API_KEY`');
    expect(page).toContain('sandbox-class: refused from autonomous sources unless operator-authored');
    expect(page).toContain('## External skills');
    expect(page).toContain('- **Licence:** GPL-3.0 (copyleft)');
    expect(page.endsWith('\n')).toBe(true);
  });

  it('is a pure function of the skills (no timestamps, order-independent)', () => {
    expect(renderSkillsCatalogPage([core, ext, sandbox])).toBe(renderSkillsCatalogPage([sandbox, ext, core]));
    expect(renderSkillsCatalogPage([])).toContain('_No skills are registered._');
  });
});
