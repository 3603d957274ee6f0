import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const APP = join(import.meta.dirname, '..', '..', 'src', 'app');

/** Every file of src/app/ and the files of src/app/ it imports, type imports included. */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of readdirSync(APP).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(join(APP, f), 'utf8');
    g.set(f, [...text.matchAll(/from\s+'\.\/([\w-]+)'/g)].map((m) => `${m[1]}.ts`));
  }
  return g;
}

describe("src/app/'s parts", () => {
  it('import each other without a circle, type imports counted (shared part types live in types.ts)', () => {
    const g = graph();
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        circles.push([...path.slice(path.indexOf(f)), f].join(' → '));
        return;
      }
      state.set(f, 'open');
      for (const d of g.get(f) ?? []) visit(d, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of g.keys()) visit(f, []);
    expect(circles).toEqual([]);
  });

  it('types.ts imports no part (every part may import it)', () => {
    expect(graph().get('types.ts')!.filter((d) => d !== 'feature-gates.ts')).toEqual([]);
  });
});
