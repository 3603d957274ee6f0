import MarkdownIt from 'markdown-it';
import { memo } from 'react';

/**
 * The assistant's text as markdown, safely: markdown-it with raw HTML off (any `<tag>` in the text is shown as
 * text, escaped), its link check (no `javascript:`, `vbscript:`, `file:` or non-image `data:` URLs), images off
 * (a chart or picture comes as an artifact, and the page's CSP would refuse a remote one anyway), and links
 * opened in a new tab without a referrer.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false }).disable(['image']);
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet('target', '_blank');
  token.attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen(tokens, idx, options, env, self);
};
// Tables scroll sideways on a phone instead of widening the page.
md.renderer.rules.table_open = () => '<div class="table-scroll" role="region" aria-label="table" tabindex="0"><table>\n';
md.renderer.rules.table_close = () => '</table></div>\n';

/** Render markdown to HTML (escaped, see above). */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  // The HTML comes from markdown-it with html: false: every character of the input is escaped or markdown.
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
});
