// The service worker: it keeps the page's own files (the page at `/` and everything under
// `/assets/`) so that the page opens without a network. Network first: while the server
// answers, every file comes fresh from it (so a deploy shows at the next load) and the copy
// kept is refreshed; without a network the kept copy answers. Nothing else passes through
// here: `/api` replies are never kept by the worker (the account the page shows offline is
// the sync core's snapshot, kept by the page in IndexedDB).

const CACHE = 'workboard-shell';
const SHELL = [
  '/',
  '/assets/app.css',
  '/assets/icon.svg',
  '/assets/manifest.json',
  '/assets/js/app.js',
];

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(SHELL).catch(() => {});
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

const own = (url) => url.origin === self.location.origin && (url.pathname === '/' || url.pathname.startsWith('/assets/'));

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (!own(url)) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const key = url.pathname === '/' ? '/' : url.pathname;
    try {
      const fresh = await fetch(request);
      if (fresh.ok) await cache.put(key, fresh.clone());
      return fresh;
    } catch (err) {
      const kept = await cache.match(key);
      if (kept) return kept;
      throw err;
    }
  })());
});
