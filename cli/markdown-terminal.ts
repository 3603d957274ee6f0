/**
 * Markdown in the terminal: an answer's `**bold**`, `*emphasis*`, `` `code` ``, headings, lists, quotes, rules,
 * fenced code and links shown as styles (ANSI) instead of markup, or as plain text when colour is off (NO_COLOR,
 * a pipe). Inline spans come from markdown-it's own inline parser (a dependency of the package, loaded on the
 * first answer, not at start-up); block structure is read line by line, so text can still stream.
 */
import { createRequire } from 'node:module';
import type MarkdownItType from 'markdown-it';

type Token = ReturnType<MarkdownItType['parseInline']>[number];

let md: MarkdownItType | undefined;
function parser(): MarkdownItType {
  if (!md) {
    const MarkdownIt = createRequire(import.meta.url)('markdown-it') as typeof MarkdownItType;
    md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  }
  return md;
}

const SGR = { bold: [1, 22], dim: [2, 22], italic: [3, 23], underline: [4, 24], cyan: [36, 39] } as const;
type Sgr = keyof typeof SGR;

/** Renders one markdown line at a time; keeps the fenced-code state between lines. */
export interface MarkdownLineRenderer {
  /** One complete line (without its newline), rendered; `undefined` when it shows nothing (a code fence). */
  line(text: string): string | undefined;
  /** Render the inline spans of a fragment of a line (used to stream a line before its end). */
  inline(text: string): string;
  /** Inside a fenced code block. */
  readonly inFence: boolean;
  /** Forget block state (a new answer). */
  reset(): void;
}

export function createMarkdownLineRenderer(options: { color: boolean }): MarkdownLineRenderer {
  const { color } = options;
  const style = (s: string, ...kinds: Sgr[]) => (color && s !== '' ? kinds.reduce((acc, k) => `\x1b[${SGR[k][0]}m${acc}\x1b[${SGR[k][1]}m`, s) : s);
  let fence: string | undefined;

  const inline = (text: string): string => {
    if (!/[*_`[\\<&]/.test(text)) return text;
    const tokens = parser().parseInline(text, {})[0]?.children ?? [];
    return renderInline(tokens, style);
  };

  return {
    get inFence() {
      return fence !== undefined;
    },
    reset() {
      fence = undefined;
    },
    inline,
    line(text) {
      const fenceMatch = /^\s*(```+|~~~+)/.exec(text);
      if (fence !== undefined) {
        if (fenceMatch && fenceMatch[1]!.startsWith(fence)) {
          fence = undefined;
          return undefined;
        }
        return style(`  ${text}`, 'cyan');
      }
      if (fenceMatch) {
        fence = fenceMatch[1]!;
        return undefined;
      }
      const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
      if (heading) return style(inline(heading[2]!), 'bold', ...(heading[1]!.length <= 2 ? (['underline'] as Sgr[]) : []));
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(text)) return style('─'.repeat(40), 'dim');
      const quote = /^\s*>\s?(.*)$/.exec(text);
      if (quote) return `${style('│', 'dim')} ${style(inline(quote[1]!), 'italic')}`;
      const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(text);
      if (bullet) return `${bullet[1]}• ${inline(bullet[2]!)}`;
      // A table's separator row (|---|:--:|) becomes a rule; its other rows keep their pipes.
      if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(text) && text.includes('-')) return style(text.replace(/[-:]/g, '─'), 'dim');
      return inline(text);
    },
  };
}

function renderInline(tokens: readonly Token[], style: (s: string, ...k: Sgr[]) => string): string {
  let out = '';
  const open: Sgr[] = [];
  let href: string | undefined;
  for (const t of tokens) {
    switch (t.type) {
      case 'text':
        out += open.length > 0 ? style(t.content, ...open) : t.content;
        break;
      case 'code_inline':
        out += style(t.content, 'cyan');
        break;
      case 'strong_open':
        open.push('bold');
        break;
      case 'em_open':
        open.push('italic');
        break;
      case 's_open':
        open.push('dim');
        break;
      case 'strong_close':
      case 'em_close':
      case 's_close':
        open.pop();
        break;
      case 'link_open':
        href = t.attrGet('href') ?? undefined;
        open.push('underline');
        break;
      case 'link_close':
        open.pop();
        if (href && !out.endsWith(href)) out += ` ${style(`(${href})`, 'dim')}`;
        href = undefined;
        break;
      case 'softbreak':
      case 'hardbreak':
        out += '\n';
        break;
      case 'html_inline':
        out += t.content;
        break;
      default:
        out += t.content;
    }
  }
  return out;
}

/** Markdown of a whole text, rendered line by line. */
export function renderMarkdownForTerminal(text: string, options: { color: boolean }): string {
  const r = createMarkdownLineRenderer(options);
  return text
    .split('\n')
    .map((l) => r.line(l))
    .filter((l): l is string => l !== undefined)
    .join('\n');
}

/** A line that starts a block (heading, quote, list item, table row, fence): rendered only once it is complete. */
const BLOCK_START = /^\s*(#{1,6}(\s|$)|>|[-*+](\s|$)|\d+[.)](\s|$)|\||```|~~~)/;

/** Where a streamed line can be cut and shown before its end: after its last space, if no inline span is open there. */
export function safeCut(partial: string, continuing = false): number {
  if (!continuing && (partial.length < 4 || BLOCK_START.test(partial))) return 0;
  const i = partial.lastIndexOf(' ');
  if (i <= 0) return 0;
  const head = partial.slice(0, i + 1);
  const count = (re: RegExp) => (head.match(re) ?? []).length;
  const strong = count(/\*\*/g);
  const star = count(/\*/g) - strong * 2;
  if (strong % 2 !== 0 || star % 2 !== 0 || count(/`/g) % 2 !== 0 || count(/~~/g) % 2 !== 0) return 0;
  if (count(/\[/g) !== count(/\]/g) || count(/\]\(/g) > count(/\]\([^)]*\)/g)) return 0;
  if (/(^|\s)_\S/.test(head) && count(/(^|\s)_/g) > count(/_(\s|$)/g)) return 0;
  return i + 1;
}

/** Control characters an answer must not send to the terminal (escape sequences); newlines and tabs stay. */
export function stripControl(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}
