/**
 * `minara skills add <path|git-url> [--force] | list | upgrade <id> | remove <id>`: vendored SKILL.md
 * packages through `app.externalSkills`, printing each package's licence.
 */
import type { ExternalSkillRecord } from '@minara/agent';
import type { CliOptions } from './app';

const USAGE = 'Usage: minara skills add <path|git-url> [--force] | list | upgrade <id> | remove <id>';

function describe(r: ExternalSkillRecord): string {
  const source = r.source.kind === 'path' ? r.source.path : r.source.url;
  const license = `${r.license.spdx} (${r.license.category}${r.license.copyleft ? ', copyleft: its terms apply when you redistribute it' : ''})`;
  return `${r.id}  ${r.description}\n    licence: ${license}\n    source:  ${source}\n    updated: ${r.updatedAt}`;
}

export async function runSkillsCommand(
  cli: CliOptions,
  args: readonly string[],
  options: { force?: boolean; write?: (s: string) => void; writeError?: (s: string) => void } = {},
): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const writeError = options.writeError ?? ((s: string) => process.stderr.write(s));
  const [verb, arg, extra] = args;
  const needsArg = verb === 'add' || verb === 'upgrade' || verb === 'remove';
  if (!verb || !['add', 'list', 'upgrade', 'remove'].includes(verb) || (needsArg && !arg) || (!needsArg && arg !== undefined) || extra !== undefined) {
    writeError(`${verb && !['add', 'list', 'upgrade', 'remove'].includes(verb) ? `minara skills: unknown subcommand "${verb}"\n` : ''}${USAGE}\n`);
    return 2;
  }
  if (options.force && verb !== 'add') {
    writeError(`minara skills: --force only applies to "add"\n${USAGE}\n`);
    return 2;
  }
  const { buildApp } = await import('./app');
  const app = await buildApp(cli);
  try {
    const external = app.externalSkills;
    switch (verb) {
      case 'list': {
        const list = external.list();
        if (list.length === 0) write(`No external skills installed (${external.dir}).\n`);
        for (const r of list) write(`${describe(r)}\n`);
        return 0;
      }
      case 'add': {
        const r = await external.add(arg!, { force: options.force === true });
        write(`Installed ${describe(r)}\n`);
        if (r.removedLinks?.length) write(`    removed symlinks: ${r.removedLinks.join(', ')}\n`);
        return 0;
      }
      case 'upgrade': {
        const r = await external.upgrade(arg!);
        write(`Upgraded ${describe(r)}\n`);
        return 0;
      }
      default: {
        if (external.remove(arg!)) {
          write(`Removed ${arg}.\n`);
          return 0;
        }
        writeError(`minara skills: no installed skill "${arg}"\n`);
        return 1;
      }
    }
  } finally {
    await app.close();
  }
}
