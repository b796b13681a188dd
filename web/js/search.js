// The search box: full-text search across every board through `GET /api/v1/search`. It
// stays hidden until the server's discovery document lists that route (servers before it
// have none). A hit shows its title and snippets with the matched words marked; choosing
// one opens its board and the card.

import { h, mount } from './ui.js';
import { sanitizeSnippet } from './markdown.js';

const LIMIT = 20;

/** Whether the discovery document (`GET /api/v1`) names a search route. */
function offersSearch(doc) {
  return Array.isArray(doc?.endpoints) && doc.endpoints.some((e) =>
    (e.method || 'GET').toUpperCase() === 'GET' && /^\/api(\/v1)?\/search$/.test(e.path));
}

/** Snippet HTML, made safe, in a span. */
function snippet(html, className) {
  const span = h('span', { class: className });
  span.innerHTML = sanitizeSnippet(html);
  return span;
}

export function createSearch(ctx) {
  const box = document.getElementById('search');
  const input = document.getElementById('search-input');
  const list = document.getElementById('search-results');
  let client = null;
  let hits = [];
  let cursor = null;
  let query = '';
  let active = -1;
  let timer = null;
  let asked = 0; // the latest request; older replies are dropped

  function close() {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  }

  function draw(message) {
    const options = hits.map((hit, i) => {
      const task = hit.task;
      const board = ctx.store.projects.get(hit.projectId)?.name || 'another board';
      const title = hit.highlights?.title?.[0];
      const more = Object.entries(hit.highlights || {}).filter(([field]) => field !== 'title').flatMap(([, s]) => s).slice(0, 2);
      return h('li', { role: 'option', id: `search-hit-${i}`, class: ['search-hit', i === active && 'active'], 'aria-selected': String(i === active),
        on: { click: () => choose(i), pointerdown: (e) => e.preventDefault() } },
      title ? snippet(title, 'hit-title') : h('span', { class: 'hit-title', text: task.title }),
      h('span', { class: 'hit-board muted', text: `${board}${task.completedAt !== null ? ' · finished' : ''}` }),
      more.map((s) => snippet(s, 'hit-snippet')));
    });
    mount(list,
      message && h('li', { class: 'search-note muted', role: 'presentation', text: message }),
      options,
      cursor && h('li', { role: 'presentation' }, h('button', { type: 'button', class: 'small', text: 'More results',
        on: { click: () => run(query, cursor), pointerdown: (e) => e.preventDefault() } })));
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    if (active >= 0) input.setAttribute('aria-activedescendant', `search-hit-${active}`);
    else input.removeAttribute('aria-activedescendant');
  }

  async function run(q, from = null) {
    const mine = ++asked;
    const params = new URLSearchParams({ q, completed: ctx.filters().done || 'recent', limit: String(LIMIT) });
    if (from) params.set('cursor', from);
    try {
      const reply = await client.get(`/search?${params}`);
      if (mine !== asked) return;
      query = q;
      hits = from ? [...hits, ...reply.hits] : reply.hits;
      cursor = reply.cursor || null;
      if (!from) active = -1;
      draw(hits.length ? `${reply.total} found` : `Nothing found for “${q}”.`);
    } catch (err) {
      if (mine !== asked) return;
      hits = [];
      cursor = null;
      // A query the server cannot parse answers 422 naming `q`: say so where it was typed.
      draw(err.status === 422 ? `That search could not be read: ${err.body.error || 'check the query'}.` : err.message);
    }
  }

  /** Opens the hit's board and card. */
  function choose(i) {
    const hit = hits[i];
    if (!hit) return;
    close();
    input.blur();
    if (!ctx.store.tasks.has(hit.task.id)) ctx.store.putTask(hit.task);
    ctx.openAt(hit.projectId, hit.task);
  }

  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (q.length < 2) {
      asked += 1;
      close();
      return;
    }
    timer = setTimeout(() => run(q), 250);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      if (!hits.length) return;
      event.preventDefault();
      active = (active + (event.key === 'ArrowDown' ? 1 : hits.length - 1)) % hits.length;
      draw(list.querySelector('.search-note')?.textContent);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (active >= 0) choose(active);
      else if (input.value.trim()) {
        clearTimeout(timer);
        run(input.value.trim());
      }
    } else if (event.key === 'Escape') {
      if (!list.hidden) {
        event.stopPropagation();
        close();
      }
    }
  });
  input.addEventListener('blur', () => setTimeout(close, 150));

  return {
    /**
     * Shows the box when the server offers search: `apiClient` is the signed-in client and
     * `doc` the server's discovery document (null when it could not be read: no box).
     */
    enable(apiClient, doc) {
      client = apiClient;
      box.hidden = !offersSearch(doc);
    },
    disable() {
      client = null;
      box.hidden = true;
      input.value = '';
      close();
    },
  };
}
