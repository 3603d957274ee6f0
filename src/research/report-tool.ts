import { z } from 'zod';
import type { ArtifactStore } from '../artifacts/types';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import { type FetchedPage, fetchedPages, normalizePageUrl } from '../tools/fetched-pages';
import type { ToolEntry } from '../tools/types';

/** Options of {@link createResearchReportTool}. */
export interface ResearchReportToolOptions {
  /** Where the report is saved (a `report://` artifact). */
  readonly artifacts: ArtifactStore;
  /** The tenant when a call has none. @default 'default' */
  readonly defaultUserId?: string | undefined;
}

/** One problem with a report's citations, as the model is told. */
export interface CitationProblem {
  readonly kind: 'source_not_read' | 'unknown_citation' | 'uncited_claim' | 'unused_source' | 'duplicate_source';
  readonly detail: string;
}

const CITE = /\[(\d{1,3}(?:\s*[,–-]\s*\d{1,3})*)\]/g;

/** The citation numbers of a text: `[1]`, `[2, 3]`, `[4-6]`. */
export function citationNumbers(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(CITE)) {
    for (const part of m[1]!.split(',')) {
      const range = part.split(/[–-]/).map((x) => Number(x.trim()));
      if (range.length === 2 && range[0]! <= range[1]! && range[1]! - range[0]! < 50) for (let n = range[0]!; n <= range[1]!; n++) out.push(n);
      else out.push(...range);
    }
  }
  return out;
}

/**
 * The claim blocks of a markdown body: every paragraph and every list item (headings, code, tables, rules and
 * blank lines are not claims). Each must carry a citation.
 */
export function claimBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  let paragraph: string[] = [];
  let fenced = false;
  const flush = () => {
    if (paragraph.length > 0) blocks.push(paragraph.join(' ').trim());
    paragraph = [];
  };
  for (const raw of markdown.split('\n')) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) {
      flush();
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    if (line === '' || /^#{1,6}\s/.test(line) || /^(-{3,}|\*{3,}|_{3,})$/.test(line) || line.startsWith('|')) {
      flush();
      continue;
    }
    if (/^([-*+]|\d{1,3}[.)])\s+/.test(line)) {
      flush();
      paragraph = [line];
      flush();
      continue;
    }
    paragraph.push(line.replace(/^>\s?/, ''));
  }
  flush();
  return blocks.filter((b) => /[\p{L}\p{N}]/u.test(b));
}

/**
 * Check a report's citations against the pages read in this turn. Sources are numbered in order (`sources[0]` is
 * `[1]`); every source must be a page `web_fetch` read in this turn, every `[n]` must name a source, every paragraph
 * and list item must cite at least one, and every source must be cited.
 */
export function checkCitations(markdown: string, sources: readonly string[], read: ReadonlyMap<string, FetchedPage>): CitationProblem[] {
  const problems: CitationProblem[] = [];
  const seen = new Set<string>();
  sources.forEach((raw, i) => {
    const url = normalizePageUrl(raw);
    if (url === undefined || !read.has(url)) problems.push({ kind: 'source_not_read', detail: `source [${i + 1}] ${raw.slice(0, 200)} was not read with web_fetch in this turn` });
    else if (seen.has(read.get(url)!.url)) problems.push({ kind: 'duplicate_source', detail: `source [${i + 1}] repeats an earlier source` });
    else seen.add(read.get(url)!.url);
  });
  const used = new Set<number>();
  for (const block of claimBlocks(markdown)) {
    const numbers = citationNumbers(block);
    if (numbers.length === 0) problems.push({ kind: 'uncited_claim', detail: `no citation in: "${block.slice(0, 120)}${block.length > 120 ? '…' : ''}"` });
    for (const n of numbers) {
      if (n < 1 || n > sources.length) problems.push({ kind: 'unknown_citation', detail: `[${n}] does not name a source (there are ${sources.length})` });
      else used.add(n);
    }
  }
  sources.forEach((_s, i) => {
    if (!used.has(i + 1)) problems.push({ kind: 'unused_source', detail: `source [${i + 1}] is never cited` });
  });
  return problems;
}

/**
 * `create_research_report` (tool set `artifacts`, READ_ONLY): the last step of deep research. Takes the report body
 * as markdown with numbered citations (`[1]`, `[2, 3]`) and the list of source URLs they number, checks them in code
 * against the pages `web_fetch` read in this turn — a source not read, a citation number without a source, a paragraph
 * or list item without a citation, or a source never cited is refused with every problem listed, so the model can fix
 * the report — then saves it as a `report://` artifact with a numbered "Sources" section (title, URL, when it was read).
 */
export function createResearchReportTool(options: ResearchReportToolOptions): ToolEntry {
  if (typeof options?.artifacts?.createReport !== 'function') throw new MinaraError('CONFIG_INVALID', 'createResearchReportTool: "artifacts" must be an ArtifactStore.');
  const { artifacts, defaultUserId = 'default' } = options;
  return defineTool({
    name: 'create_research_report',
    toolSet: 'artifacts',
    description:
      'Save a research report with numbered citations. markdown: the body (no title, no sources list); every paragraph and list item cites the pages it rests on as [1], [2, 3]. ' +
      'sources: the URLs in citation order ([1] is sources[0]); each must be a page you read with web_fetch in this turn. Problems come back listed; fix them and call again.',
    inputSchema: z.object({
      title: z.string().trim().min(3).max(200),
      question: z.string().trim().min(3).max(1_000).describe('The question the report answers.'),
      markdown: z.string().min(20).max(100_000),
      sources: z.array(z.string().min(1).max(2_000)).min(1).max(30),
    }),
    permissionTier: PermissionTier.READ_ONLY,
    execute: async (input, ctx) => {
      const read = fetchedPages(ctx.call);
      if (read.size === 0) throw new MinaraError('INVALID_ARGUMENT', 'sources: no page was read with web_fetch in this turn; read the sources first, then write the report');
      const problems = checkCitations(input.markdown, input.sources, read);
      if (problems.length > 0) {
        const list = problems.slice(0, 12).map((p) => `- ${p.detail}`).join('\n');
        throw new MinaraError('INVALID_ARGUMENT', `The report was not saved; fix its citations:\n${list}${problems.length > 12 ? `\n- … and ${problems.length - 12} more` : ''}\nPages read in this turn: ${[...new Set([...read.values()].map((p) => p.url))].slice(0, 20).join(', ')}`);
      }
      const pages = input.sources.map((s) => read.get(normalizePageUrl(s)!)!);
      const sourcesMd = pages.map((p, i) => `${i + 1}. ${p.title ? `${p.title.replace(/[[\]]/g, '')} — ` : ''}<${p.url}> (read ${p.fetchedAt.slice(0, 16).replace('T', ' ')} UTC)`).join('\n');
      const markdown = `# ${input.title}\n\n> ${input.question.replace(/\n+/g, ' ')}\n\n${input.markdown.trim()}\n\n## Sources\n\n${sourcesMd}\n`;
      const report = await artifacts.createReport(
        { userId: ctx.call.userId ?? defaultUserId, sessionId: ctx.call.sessionId, ...(ctx.call.turnId ? { turnId: ctx.call.turnId } : {}) },
        { title: input.title, markdown },
      );
      return {
        uri: report.uri,
        id: report.id,
        title: input.title,
        sources: pages.map((p, i) => ({ n: i + 1, url: p.url, ...(p.title ? { title: p.title } : {}) })),
        note: `Put ${report.uri} in your answer; summarise the findings with the same [n] citations.`,
      };
    },
  });
}
