// Markdown descriptions rendered with marked (tables, fenced code) and sanitised with
// DOMPurify before they touch the page.

import { marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

// Raw HTML in a description is shown as text, not markup: the sanitiser below is the second
// line, not the only one (and the page's CSP never sees an inline handler to refuse).
marked.use({
  gfm: true,
  breaks: false,
  renderer: {
    html(token) {
      return escapeHtml(token.text);
    },
    // A task item (`- [ ] text`) gets its checkbox and first line inside one <label>, so
    // that a screen reader names the checkbox by the item's text instead of by nothing.
    listitem(item) {
      if (!item.task) return false;
      const rest = item.tokens.slice(1);
      const first = item.tokens[0];
      let head;
      if (first?.type === 'checkbox') {
        const text = rest[0]?.type === 'text' ? rest.shift() : null;
        head = `<label>${this.checkbox(first)}${text ? this.parser.parse([text]) : ''}</label>`;
      } else if (first?.type === 'paragraph' && first.tokens?.[0]?.type === 'checkbox') {
        head = `<p><label>${this.parser.parseInline(first.tokens)}</label></p>`;
      } else {
        return false;
      }
      return `<li class="task">${head}${this.parser.parse(rest)}</li>\n`;
    },
  },
});

// Links open in a new tab and never pass the page's address along.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Sanitised HTML for a Markdown text; style attributes are dropped (the page's CSP
 * would refuse them anyway). */
export function renderMarkdown(text) {
  const html = marked.parse(text || '', { async: false });
  return DOMPurify.sanitize(html, { FORBID_ATTR: ['style'], FORBID_TAGS: ['style', 'form'] });
}

/** A search snippet: already-escaped text with `<mark>` around matched words; anything
 * but `mark` (and all attributes) is removed before it reaches the page. */
export function sanitizeSnippet(html) {
  // Any "<" that does not open or close a plain <mark> is shown as text, so no other
  // element ever reaches a parser (an <img onerror> would, even in DOMPurify's own).
  const marksOnly = String(html || '').replace(/<(?!\/?mark>)/g, '&lt;');
  return DOMPurify.sanitize(marksOnly, { ALLOWED_TAGS: ['mark'], ALLOWED_ATTR: [] });
}
