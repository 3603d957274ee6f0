import type MarkdownIt from 'markdown-it';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Options as CsvOptions } from 'csv-parse/sync';
import type { Artifact } from './types';

/** Escape text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON that is safe inside a `<script>` element: `<`, U+2028 and U+2029 escaped, so no `</script>` can close it. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

let vegaSource: string | undefined;
/** Vega's browser build (`vega/build/vega.min.js`), read once. Charts are compiled to Vega on the server, so Vega-Lite is not needed here. */
export function vegaBrowserSource(): string {
  if (vegaSource === undefined) {
    const entry = createRequire(import.meta.url).resolve('vega');
    const source = readFileSync(path.join(path.dirname(entry), 'vega.min.js'), 'utf8');
    if (/<\/script/i.test(source)) throw new Error('vega.min.js contains "</script"; it cannot be inlined safely');
    vegaSource = source;
  }
  return vegaSource;
}

/**
 * The Content-Security-Policy of every viewer page: no network at all (`default-src 'none'`); inline scripts
 * and `eval` only for Vega's expression compiler. Sent as a header by the gateway (with `sandbox allow-scripts`)
 * and as a `<meta>` in the files written to disk.
 */
export const VIEWER_CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:";

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:24px auto;max-width:980px;padding:0 16px;color:#1b1f24}
h1{font-size:22px;margin:0 0 4px}.meta{color:#57606a;font-size:13px;margin-bottom:16px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left}th{background:#f6f8fa}
#chart{display:inline-block}pre{background:#f6f8fa;padding:12px;overflow:auto}code{background:#f6f8fa;padding:0 3px}.error{color:#b42318}`;

/** Options of {@link renderArtifactHtml}. */
export interface ArtifactHtmlOptions {
  /** Relative links to the files written beside the page (the materializer sets them). */
  readonly links?: { readonly csv?: string | undefined; readonly png?: string | undefined; readonly json?: string | undefined } | undefined;
  /** Most spreadsheet rows shown in the table (the CSV has them all). @default 1000 */
  readonly maxTableRows?: number | undefined;
}

/**
 * A self-contained HTML page for one artifact: the chart drawn client-side by Vega (inlined; no network), a
 * report's markdown as HTML, a spreadsheet as a table. Every piece of text from the artifact is escaped, and
 * the spec sits in a JSON script element that cannot be closed from inside.
 */
export function renderArtifactHtml(artifact: Artifact, options: ArtifactHtmlOptions = {}): string {
  const title = artifact.title ?? artifact.uri;
  const links = options.links ?? {};
  const linkHtml = [links.png ? `<a href="${escapeHtml(links.png)}">PNG</a>` : '', links.csv ? `<a href="${escapeHtml(links.csv)}">CSV</a>` : '', links.json ? `<a href="${escapeHtml(links.json)}">JSON</a>` : '']
    .filter(Boolean)
    .join(' · ');
  let body: string;
  let scripts = '';
  if (artifact.status !== 'completed' || !artifact.data) {
    body = `<p class="error">This ${artifact.kind} is ${escapeHtml(artifact.status)}${artifact.error ? `: ${escapeHtml(artifact.error)}` : ''}.</p>`;
  } else if (artifact.kind === 'chart') {
    body = `<div id="chart" role="img" aria-label="${escapeHtml(title)}"></div>${artifact.data.description ? `<p>${escapeHtml(artifact.data.description)}</p>` : ''}`;
    scripts =
      `<script>${vegaBrowserSource()}</script>\n<script type="application/json" id="vega-spec">${jsonForScript(artifact.data.vega)}</script>\n` +
      `<script>(function(){var spec=JSON.parse(document.getElementById('vega-spec').textContent);` +
      `var loader=vega.loader();loader.load=loader.sanitize=function(){return Promise.reject(new Error('charts load nothing from the network'))};` +
      `new vega.View(vega.parse(spec),{renderer:'svg',container:'#chart',hover:true,loader:loader}).runAsync()` +
      `.then(function(){document.body.setAttribute('data-rendered','1')},function(e){document.body.setAttribute('data-rendered','error');document.getElementById('chart').textContent=String(e&&e.message||e)})})()</script>`;
  } else if (artifact.kind === 'report') {
    body = `<article>${markdownToHtml(artifact.data.markdown)}</article>`;
  } else {
    body = `${artifact.data.description ? `<p>${escapeHtml(artifact.data.description)}</p>` : ''}${csvTable(artifact.data.csvContent, options.maxTableRows ?? 1000)}`;
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${VIEWER_CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body data-artifact="${escapeHtml(artifact.id)}" data-kind="${artifact.kind}">
<h1>${escapeHtml(title)}</h1>
<div class="meta">${escapeHtml(artifact.uri)} · ${escapeHtml(artifact.createdAt)}${linkHtml ? ` · ${linkHtml}` : ''}</div>
${body}
${scripts}
</body></html>
`;
}

function csvTable(csv: string, maxRows: number): string {
  let rows: string[][];
  try {
    rows = parseCsv(csv, { relax_column_count: true, skip_empty_lines: true, bom: true, to: maxRows + 1 }) as string[][];
  } catch {
    return `<pre>${escapeHtml(csv.slice(0, 100_000))}</pre>`;
  }
  const [head = [], ...rest] = rows;
  const cells = (r: string[], tag: string) => `<tr>${r.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join('')}</tr>`;
  return `<table><thead>${cells(head, 'th')}</thead><tbody>${rest.map((r) => cells(r, 'td')).join('\n')}</tbody></table>${rest.length >= maxRows ? `<p class="meta">First ${maxRows} rows shown; the CSV has them all.</p>` : ''}`;
}

// markdown-it and csv-parse load on first use, not with the package (the REPL's start does not render artifacts).
const requireLazy = createRequire(import.meta.url);
let markdownIt: MarkdownIt | undefined;
/** One renderer: raw HTML in the markdown is escaped (`html: false`), links only with safe schemes (markdown-it's `validateLink`). */
const markdown = (): MarkdownIt => (markdownIt ??= new (requireLazy('markdown-it') as typeof MarkdownIt)({ html: false, linkify: false, typographer: false }));
const parseCsv = (input: string, options: CsvOptions): unknown[] => (requireLazy('csv-parse/sync') as { parse: (input: string, options: CsvOptions) => unknown[] }).parse(input, options);

/**
 * A report's markdown as HTML, rendered by `markdown-it` (CommonMark with tables and fenced code): markup
 * in a report can never become HTML, and `javascript:` links are refused by the renderer.
 */
export function markdownToHtml(source: string): string {
  return markdown().render(source);
}
