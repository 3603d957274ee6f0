/** Default per-file prompt cap, in characters. */
export const DEFAULT_MAX_FILE_CHARS = 20_000;
/** Default total prompt cap across all workspace files, in characters. */
export const DEFAULT_MAX_TOTAL_CHARS = 60_000;
/** Default cap for a mid-2026 directives-style USER.md, in characters (OpenClaw's separate cap). */
export const DEFAULT_MAX_USER_DIRECTIVES_CHARS = 4_000;
/** Below this many characters of remaining total budget, later files are skipped. */
export const MIN_REMAINING_CHARS = 64;

/** Which on-disk layout a workspace follows. */
export type WorkspaceLayout = 'classic' | 'openclaw-2026';

/** The result of {@link truncateForPrompt}. */
export interface TruncatedText {
  readonly text: string;
  readonly truncated: boolean;
  /** Characters of the untruncated input. */
  readonly originalChars: number;
  /** Characters kept from the head and the tail (equal to the input when not truncated). */
  readonly keptHead: number;
  readonly keptTail: number;
}

function safeCut(text: string, index: number): number {
  // Do not split a surrogate pair.
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

/**
 * Cut `content` to the first 70% and the last 20% of `maxChars`, joined by OpenClaw's marker naming the
 * file: `[...truncated, read <FILE> for full content...]` and `…(truncated <FILE>: kept <head>+<tail>
 * chars of <len>)…`. Content that fits is returned unchanged.
 */
export function truncateForPrompt(content: string, fileName: string, maxChars: number): TruncatedText {
  const len = content.length;
  if (len <= maxChars) return { text: content, truncated: false, originalChars: len, keptHead: len, keptTail: 0 };
  const head = safeCut(content, Math.floor(maxChars * 0.7));
  let tailStart = len - Math.floor(maxChars * 0.2);
  const c = content.charCodeAt(tailStart);
  if (c >= 0xdc00 && c <= 0xdfff) tailStart += 1;
  const tail = len - tailStart;
  const marker = `\n[...truncated, read ${fileName} for full content...]\n…(truncated ${fileName}: kept ${head}+${tail} chars of ${len})…\n`;
  return {
    text: `${content.slice(0, head)}${marker}${content.slice(tailStart)}`,
    truncated: true,
    originalChars: len,
    keptHead: head,
    keptTail: tail,
  };
}

/** Drop a leading BOM and a leading `---` YAML frontmatter block (OpenClaw docs templates carry one). */
export function stripFrontmatter(content: string): string {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  if (!/^---\r?\n/.test(text)) return text;
  const end = /\r?\n---\r?\n/.exec(text.slice(3));
  if (!end || end.index > 8_000) return text;
  return text.slice(3 + end.index + end[0].length).replace(/^(?:\r?\n)+/, '');
}

const DIRECTIVE_META = /^\s*<!--\s*observed:\s*(\d{4}-\d{2}-\d{2})\s*\|\s*status:\s*([a-z_-]+)\s*-->\s*$/i;

/** True for a mid-2026 USER.md made of dated directives. */
export function isDirectiveUserMd(content: string): boolean {
  return /^#\s*USER\.md\s*-\s*User Model/m.test(content) || /<!--\s*observed:\s*\d{4}-\d{2}-\d{2}\s*\|\s*status:/i.test(content);
}

/**
 * Drop superseded directives from a mid-2026 USER.md. A directive is its `<!-- observed: … | status: … -->`
 * line plus the lines after it up to a blank line, the next directive comment or a heading.
 */
export function activeUserDirectives(content: string): string {
  const out: string[] = [];
  let skipping = false;
  for (const line of content.split('\n')) {
    const meta = DIRECTIVE_META.exec(line);
    if (meta) {
      skipping = (meta[2] ?? '').toLowerCase() !== 'active';
      if (!skipping) out.push(line);
      continue;
    }
    if (skipping && (line.trim() === '' || /^#{1,6}\s/.test(line))) skipping = false;
    if (!skipping) out.push(line);
  }
  return out.join('\n');
}

/** Guess the layout from the files present (mid-2026: TOOLS folded into AGENTS, USER as directives). */
export function detectLayout(files: { readonly agents?: string | undefined; readonly user?: string | undefined; readonly hasTools: boolean }): WorkspaceLayout {
  if (files.user !== undefined && isDirectiveUserMd(files.user)) return 'openclaw-2026';
  if (!files.hasTools && files.agents !== undefined && /^###\s+Local notes\b/im.test(files.agents)) return 'openclaw-2026';
  return 'classic';
}

/** The IDENTITY.md fields (`- **Label:** value` or `- Label: value`, case-insensitive; placeholders ignored). */
export interface IdentityFields {
  readonly name?: string;
  readonly creature?: string;
  readonly vibe?: string;
  readonly theme?: string;
  readonly emoji?: string;
  readonly avatar?: string;
}

/** Parse IDENTITY.md into its display fields, for UI surfaces. */
export function parseIdentityFields(content: string): IdentityFields {
  const out: Record<string, string> = {};
  for (const line of stripFrontmatter(content).split('\n')) {
    const m = /^\s*[-*]\s*(?:\*\*)?\s*(name|creature|vibe|theme|emoji|avatar)\s*:?\s*(?:\*\*)?\s*:?\s*(.*)$/i.exec(line);
    if (!m) continue;
    const value = (m[2] ?? '').trim();
    if (value === '' || /^_?\(.*\)_?$/.test(value)) continue;
    out[(m[1] ?? '').toLowerCase()] = value;
  }
  return out as IdentityFields;
}
