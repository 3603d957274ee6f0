/**
 * `minara import openclaw <dir> [--force]` and `minara import hermes <dir>`: bring another agent's workspace or
 * memories into this data directory's workspace (the SDK's `importOpenClawWorkspace` / `importHermesMemory`).
 */
import type { CliOptions } from './app';

export interface ImportCommandOptions {
  readonly force?: boolean | undefined;
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
}

const USAGE = 'usage: minara import openclaw <workspace-dir> [--force] | minara import hermes <hermes-home-or-memories-dir>';

export async function runImportCommand(cli: CliOptions, positionals: readonly string[], options: ImportCommandOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = options.writeErr ?? ((s: string) => process.stderr.write(s));
  const [kind, from, ...rest] = positionals;
  if ((kind !== 'openclaw' && kind !== 'hermes') || from === undefined || rest.length > 0 || (kind === 'hermes' && options.force)) {
    writeErr(`minara: ${USAGE}\n`);
    return 2;
  }
  const [{ buildApp }, { importHermesMemory, importOpenClawWorkspace }] = await Promise.all([import('./app'), import('@minara/agent')]);
  const app = await buildApp(cli, { mcp: false });
  try {
    const to = app.workspace?.dir;
    if (!to) {
      writeErr('minara: this app has no workspace to import into\n');
      return 1;
    }
    if (kind === 'openclaw') {
      const result = await importOpenClawWorkspace({ from, to, overwrite: options.force === true, logger: app.logger });
      for (const f of result.files) write(`  ${f.action.padEnd(18)} ${f.file}${f.reason ? `  (${f.reason})` : ''}\n`);
      const copied = result.files.filter((f) => f.action === 'copied' || f.action === 'replaced-template' || f.action === 'overwritten').length;
      write(`Imported ${copied} file(s) from ${from} into ${to}.${result.files.some((f) => f.action === 'skipped-exists') ? ' Files you already had were kept (--force replaces them).' : ''}\n`);
      return result.files.some((f) => f.action === 'refused') ? 1 : 0;
    }
    const result = await importHermesMemory({ from, to, logger: app.logger });
    write(`Imported ${result.imported} Hermes entr${result.imported === 1 ? 'y' : 'ies'} into ${to}/MEMORY.md (${result.duplicates} already there; sources: ${result.sources.join(', ') || 'none found'}).\n`);
    for (const r of result.refused) write(`  refused: an entry of ${r.source} looks like a secret (${r.pattern}); it was not imported\n`);
    return 0;
  } catch (error) {
    writeErr(`minara: import failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await app.close();
  }
}
