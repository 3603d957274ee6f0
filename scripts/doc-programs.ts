/**
 * The code blocks of README.md and docs/*.md as programs: extraction, the placeholder rule, and running each one
 * offline in a throwaway home. Shared by test/docs/programs.test.ts (in the repository, the package mapped to
 * src/) and scripts/check-doc-programs.ts (from the packed tarball in a fresh project).
 *
 * The convention (docs/testing.md, "Examples in the docs"):
 * - a ```ts (or ```typescript, ```tsx) block is a complete program: its imports, then code that type-checks
 *   strictly against the public entries and runs to a clean exit offline;
 * - a block whose info string is `ts fragment` (or `tsx fragment`) is an illustration and is skipped;
 * - what the reader supplies (their model, broker, tools) is a placeholder, a line that ends with
 *   `// placeholder for <what>: <the line that fills it>`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** One fenced code block of a TypeScript flavour. */
export interface DocBlock {
  /** Path from the repository root, e.g. `docs/gateway.md`. */
  readonly file: string;
  /** 1-based line of the block's first code line in `file`. */
  readonly line: number;
  readonly lang: string;
  /** Words after the language in the info string (`fragment`). */
  readonly flags: readonly string[];
  readonly code: string;
}

/** Languages whose blocks are checked. */
const CHECKED_LANGS = new Set(['ts', 'typescript', 'tsx', 'mts']);
/** Info-string words the harness understands. */
const KNOWN_FLAGS = new Set(['fragment']);

/** README.md and every docs/*.md (not the generated docs/api), sorted. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** The TypeScript-flavoured fenced blocks of one markdown text. Indented fences (in list items) are read too. */
export function extractBlocks(file: string, text: string): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent = '', fence = '```', lang = '', rest = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.trimStart().startsWith(fence) && l.trim().replace(/[`~]/g, '') === '') break;
      body.push(l.startsWith(indent) ? l.slice(indent.length) : l.trimStart());
    }
    if (CHECKED_LANGS.has(lang.toLowerCase())) {
      blocks.push({ file, line: i + 2, lang: lang.toLowerCase(), flags: rest.trim() === '' ? [] : rest.trim().split(/\s+/), code: `${body.join('\n')}\n` });
    }
    i = j;
  }
  return blocks;
}

/** What the docs hold: the programs to check, the fragments skipped, and blocks that break the convention. */
export interface DocInventory {
  readonly programs: DocBlock[];
  readonly fragments: DocBlock[];
  /** `file:line: problem`, one per bad block or line. */
  readonly problems: string[];
}

/** Read every doc file and sort its blocks into programs and fragments; report blocks that break the convention. */
export function inventory(root: string): DocInventory {
  const programs: DocBlock[] = [];
  const fragments: DocBlock[] = [];
  const problems: string[] = [];
  for (const file of docFiles(root)) {
    for (const block of extractBlocks(file, readFileSync(path.join(root, file), 'utf8'))) {
      const unknown = block.flags.filter((f) => !KNOWN_FLAGS.has(f));
      if (unknown.length > 0) {
        problems.push(`${file}:${block.line - 1}: unknown word(s) ${unknown.map((u) => JSON.stringify(u)).join(', ')} in the info string; a TypeScript block is a program, or \`${block.lang} fragment\``);
        continue;
      }
      if (block.flags.includes('fragment')) {
        fragments.push(block);
        continue;
      }
      problems.push(...placeholderProblems(block));
      programs.push(block);
    }
  }
  return { programs, fragments, problems };
}

const PLACEHOLDER = /\/\/\s*placeholder\b(.*)$/i;
const PLACEHOLDER_FORM = /^\s+for\s+[^:]+:\s*\S/;

/** A line that says "placeholder" must say for what and give the line that fills it. */
export function placeholderProblems(block: DocBlock): string[] {
  const out: string[] = [];
  block.code.split('\n').forEach((l, k) => {
    const m = PLACEHOLDER.exec(l);
    if (m && !PLACEHOLDER_FORM.test(m[1] ?? '')) {
      out.push(`${block.file}:${block.line + k}: a placeholder reads \`// placeholder for <what>: <the line that fills it>\``);
    }
  });
  return out;
}

/** A stable file name for a block's program: `docs-gateway-md-L8.ts`. */
export function programFileName(block: DocBlock): string {
  const base = block.file.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase();
  return `${base}-L${block.line}.${block.lang === 'tsx' ? 'tsx' : 'ts'}`;
}

/**
 * The environment a program runs in: a throwaway HOME and MINARA_DATA_DIR, no model or provider key, no
 * database URL, UTC, `GATEWAY_PORT=0`; only PATH comes from the caller (tools a program may spawn, like git).
 */
export function programEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    USERPROFILE: home,
    MINARA_DATA_DIR: path.join(home, '.minara'),
    // The caller's temporary directory: tsx keeps its transform cache there, warm across programs.
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    TZ: 'UTC',
    // A server a program starts listens on a free port, so programs never collide with each other or a dev server.
    GATEWAY_PORT: '0',
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
  };
}

/** How one program ended. */
export interface ProgramResult {
  readonly block: DocBlock;
  readonly ok: boolean;
  readonly code: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link runPrograms}. */
export interface RunProgramsOptions {
  /** Where each program's file is (already written). */
  readonly fileOf: (block: DocBlock) => string;
  /** The command that runs a program file: `[executable, ...args]`. */
  readonly command: (file: string) => readonly string[];
  /** Extra environment (e.g. `TSX_TSCONFIG_PATH`). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** @default 2 */
  readonly concurrency?: number | undefined;
  /** Per program. @default 90 000 */
  readonly timeoutMs?: number | undefined;
}

/**
 * Run every program in its own empty working directory and home (removed afterwards). A program passes when it
 * exits 0 by itself within the timeout: a server it starts must be closed by it.
 */
export async function runPrograms(blocks: readonly DocBlock[], options: RunProgramsOptions): Promise<ProgramResult[]> {
  const { concurrency = 2, timeoutMs = 90_000 } = options;
  const results: ProgramResult[] = new Array(blocks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < blocks.length) {
      const index = next++;
      const block = blocks[index]!;
      results[index] = await runOne(block, options, timeoutMs);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, blocks.length) }, () => worker()));
  return results;
}

async function runOne(block: DocBlock, options: RunProgramsOptions, timeoutMs: number): Promise<ProgramResult> {
  const home = mkdtempSync(path.join(tmpdir(), 'minara-doc-'));
  const cwd = path.join(home, 'project');
  mkdirSync(cwd);
  const [exe, ...args] = options.command(options.fileOf(block));
  try {
    return await new Promise<ProgramResult>((resolve) => {
      const child = spawn(exe!, args, { cwd, env: { ...programEnv(home), ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ block, ok: code === 0 && !timedOut, code, signal, timedOut, stdout, stderr });
      });
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** One failed program, for a report: where it is in the docs and what it printed. */
export function describeFailure(r: ProgramResult): string {
  const why = r.timedOut ? 'did not exit by itself (timed out; a server it starts must be closed)' : r.signal ? `was killed by ${r.signal}` : `exited with code ${r.code}`;
  const tail = (s: string) => s.trim().split('\n').slice(-25).join('\n');
  return `${r.block.file}:${r.block.line}: the program ${why}\n${tail(r.stderr) || tail(r.stdout)}`;
}

/** Map `program.ts(12,5): error TS…` lines of tsc output back to `docs/x.md:<line>`. */
export function mapDiagnostics(output: string, byFileName: ReadonlyMap<string, DocBlock>): string {
  return output
    .split('\n')
    .map((l) => {
      const m = /^(?:.*[\\/])?([^\\/()]+\.tsx?)\((\d+),(\d+)\): (.*)$/.exec(l);
      const block = m ? byFileName.get(m[1]!) : undefined;
      return m && block ? `${block.file}:${block.line + Number(m[2]) - 1}:${m[3]}: ${m[4]}` : l;
    })
    .join('\n');
}

/** Remove and recreate a directory. */
export function freshDir(dir: string): string {
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}
