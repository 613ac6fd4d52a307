// Markdown for the model's answers, with no raw HTML: HTML in the source is
// shown as text, links only go to http(s), mailto and in-page anchors, and
// images become links (the view's Content-Security-Policy blocks remote
// content anyway). Used by the webview; pure, so it is unit tested.

import { Marked, type Tokens } from 'marked';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Whether href is a link the view may show. */
export function safeHref(href: string | null | undefined): string | undefined {
  if (!href) return undefined;
  const h = href.trim();
  if (/^(https?:|mailto:)/i.test(h) || h.startsWith('#')) return h;
  // A relative path (a file of the workspace): no scheme at all.
  if (!/^[a-z][a-z0-9+.-]*:/i.test(h) && !h.startsWith('//')) return h;
  return undefined;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    link(token: Tokens.Link): string {
      const text = this.parser.parseInline(token.tokens);
      const href = safeHref(token.href);
      if (href === undefined) return text;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<a href="${escapeHtml(href)}"${title}>${text}</a>`;
    },
    image(token: Tokens.Image): string {
      const href = safeHref(token.href);
      const alt = escapeHtml(token.text || token.href);
      return href === undefined ? alt : `<a href="${escapeHtml(href)}">${alt}</a>`;
    },
  },
});

/** Renders Markdown to HTML that carries no HTML of the source. */
export function renderMarkdown(src: string): string {
  const out = marked.parse(src);
  return typeof out === 'string' ? out : '';
}
