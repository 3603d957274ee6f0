/**
 * The `yaml` package, loaded on first use rather than with the package: most starts parse no YAML at all
 * (a SKILL.md, a memory export), and loading it cost ~15 ms of every cold start. On Node its entry is CommonJS,
 * so `require` gives the same instance an `import` would.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let loaded: typeof Yaml | undefined;

/** The `yaml` module. */
export function yaml(): typeof Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return loaded;
}
