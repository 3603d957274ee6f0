import { constants, promises as fsp, realpathSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { openInSandbox, resolveInSandbox } from '../safety/sandbox';
import { SandboxEscapeError } from '../errors/subclasses';
import { generateId } from '../util/ids';
import { ensurePrivateDirSync, PRIVATE_DIR_MODE } from '../util/private-fs';
import { defineTool } from './define-tool';
import type { ToolEntry } from './types';

/** Options for {@link createFileTools}. */
export interface FileToolsOptions {
  /** Sandbox root; every path the model gives is resolved under it by `resolveInSandbox`. */
  readonly root: string;
  /** Largest file `read_file` returns. @default 1048576 (1 MiB) */
  readonly maxReadBytes?: number | undefined;
  /** Largest content `write_file` accepts. @default 1048576 (1 MiB) */
  readonly maxWriteBytes?: number | undefined;
  /** Most entries `list_files` returns. @default 500 */
  readonly maxListEntries?: number | undefined;
}

const pathField = z.string().min(1).max(4096).describe('Path relative to the sandbox root, with "/" separators');

/**
 * The sandboxed file tools `read_file` (READ_ONLY), `write_file` (CONFIRM_ONCE) and `list_files`
 * (READ_ONLY) in tool set `file`. They resolve every path with {@link resolveInSandbox} and nothing else.
 *
 * @example
 * ```ts
 * const registry = createToolRegistry({ tools: createFileTools({ root: `${dataDir}/sandbox/files` }), storage });
 * ```
 */
export function createFileTools(options: FileToolsOptions): ToolEntry[] {
  const { root, maxReadBytes = 1024 * 1024, maxWriteBytes = 1024 * 1024, maxListEntries = 500 } = options;
  if (typeof root !== 'string' || root === '') throw new MinaraError('CONFIG_INVALID', 'createFileTools: "root" must be a directory path.');
  const ensureRoot = () => {
    ensurePrivateDirSync(root);
    return realpathSync(root);
  };
  const display = (abs: string) => path.relative(ensureRoot(), abs).split(path.sep).join('/');

  const readFile = defineTool({
    name: 'read_file',
    toolSet: 'file',
    description: `Read a UTF-8 text file from the sandbox (at most ${maxReadBytes} bytes).`,
    inputSchema: z.object({ path: pathField }),
    permissionTier: PermissionTier.READ_ONLY,
    sideEffects: false,
    async execute({ path: rel }) {
      ensureRoot();
      const abs = resolveInSandbox(rel, { root });
      let handle;
      try {
        handle = await openInSandbox(rel, { root, flags: constants.O_RDONLY });
      } catch (error) {
        if (error instanceof SandboxEscapeError) throw error;
        throw new MinaraError('NOT_FOUND', `read_file: cannot open "${rel}" (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
      }
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) throw new MinaraError('INVALID_ARGUMENT', `read_file: "${rel}" is not a regular file.`);
        if (stat.size > maxReadBytes) throw new MinaraError('FILE_TOO_LARGE', `read_file: "${rel}" is ${stat.size} bytes; the limit is ${maxReadBytes}.`);
        const content = await handle.readFile({ encoding: 'utf8' });
        return { path: display(abs), bytes: stat.size, content };
      } finally {
        await handle.close();
      }
    },
  });

  const writeFile = defineTool({
    name: 'write_file',
    toolSet: 'file',
    description: `Write a UTF-8 text file in the sandbox (at most ${maxWriteBytes} bytes). Creates parent folders.`,
    inputSchema: z.object({
      path: pathField,
      content: z.string(),
      mode: z.enum(['overwrite', 'append', 'create']).nullish().describe('overwrite (default), append, or create (fail if it exists)'),
    }),
    permissionTier: PermissionTier.CONFIRM_ONCE,
    async execute({ path: rel, content, mode }) {
      const bytes = Buffer.byteLength(content, 'utf8');
      if (bytes > maxWriteBytes) throw new MinaraError('FILE_TOO_LARGE', `write_file: content is ${bytes} bytes; the limit is ${maxWriteBytes}.`);
      ensureRoot();
      const abs = resolveInSandbox(rel, { root });
      await fsp.mkdir(path.dirname(abs), { recursive: true, mode: PRIVATE_DIR_MODE });
      // Re-resolve after creating folders: a folder swapped for a symlink in between is caught here.
      const target = resolveInSandbox(rel, { root });
      if (mode === 'append') {
        const handle = await openInSandbox(rel, { root, flags: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT });
        try {
          await handle.writeFile(content, 'utf8');
        } finally {
          await handle.close();
        }
      } else {
        if (mode === 'create') {
          const exists = await fsp.lstat(target).then(() => true, () => false);
          if (exists) throw new MinaraError('INVALID_ARGUMENT', `write_file: "${rel}" already exists (mode "create").`);
        }
        const tmpName = `.${path.basename(target)}.${generateId('tmp')}`;
        const tmpRel = [...rel.split('/').filter((x) => x !== '' && x !== '.').slice(0, -1), tmpName].join('/');
        // The temp file is opened and proven inside before a byte is written; the rename stays in its folder.
        const handle = await openInSandbox(tmpRel, { root, flags: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL });
        const tmp = path.join(path.dirname(target), tmpName);
        try {
          await handle.writeFile(content, 'utf8');
          await handle.sync();
        } finally {
          await handle.close();
        }
        await fsp.rename(tmp, target).catch(async (error: unknown) => {
          await fsp.rm(tmp, { force: true });
          throw error;
        });
      }
      return { path: display(target), bytes };
    },
  });

  const listFiles = defineTool({
    name: 'list_files',
    toolSet: 'file',
    description: 'List files and folders in a sandbox folder (the root when path is omitted).',
    inputSchema: z.object({ path: pathField.nullish() }),
    permissionTier: PermissionTier.READ_ONLY,
    sideEffects: false,
    async execute({ path: rel }) {
      const rootReal = ensureRoot();
      const abs = rel === undefined || rel === null || rel === '.' || rel === './' ? rootReal : resolveInSandbox(rel, { root });
      const dirents = await fsp.readdir(abs, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
        throw new MinaraError('NOT_FOUND', `list_files: cannot list "${rel ?? '.'}" (${error.code ?? 'error'}).`);
      });
      dirents.sort((a, b) => a.name.localeCompare(b.name));
      const entries = [];
      for (const d of dirents.slice(0, maxListEntries)) {
        const type = d.isDirectory() ? 'directory' : d.isFile() ? 'file' : d.isSymbolicLink() ? 'symlink' : 'other';
        const size = d.isFile() ? (await fsp.lstat(path.join(abs, d.name))).size : undefined;
        entries.push({ name: d.name, type, ...(size === undefined ? {} : { size }) });
      }
      return { path: abs === rootReal ? '.' : display(abs), entries, truncated: dirents.length > maxListEntries };
    },
  });

  return [readFile, writeFile, listFiles];
}
