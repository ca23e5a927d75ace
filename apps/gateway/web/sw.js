// @ts-check
// The service worker (/sw.js, scope /): precaches the app's shell (its pages, styles, scripts and icons)
// under a cache named by the shell's content hash, so a new release installs beside the old one, takes
// over at once and deletes it. Pages come from the network first (the cache when offline); shell assets
// from the cache. Nothing else is touched: API answers, job events and artifacts never reach a cache.

// The gateway replaces this line when it serves the file: the version and the list of shell URLs.
const SHELL = { version: 'unbuilt', pages: ['/'], assets: [] };

/** @type {any} */
const worker = self;
const CACHE = `reelay-shell-${SHELL.version}`;
const PAGES = new Set(SHELL.pages);
const ASSETS = new Set(SHELL.assets);

worker.addEventListener('install', (/** @type {any} */ event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll([...SHELL.pages, ...SHELL.assets]))
      .then(() => worker.skipWaiting()),
  );
});

worker.addEventListener('activate', (/** @type {any} */ event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(
          names.filter((name) => name.startsWith('reelay-shell-') && name !== CACHE).map((name) => caches.delete(name)),
        ),
      )
      .then(() => worker.clients.claim()),
  );
});

worker.addEventListener('fetch', (/** @type {any} */ event) => {
  /** @type {Request} */
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== worker.location.origin) return;
  if (request.mode === 'navigate' && PAGES.has(url.pathname)) {
    // The network first, so an online visitor always sees the current page; the shell when offline.
    // (Pages vary by Accept-Language, for the catalogs inlined in them: the one kept was fetched in
    // this browser's languages, and a page in another language fetches its catalogs, kept below.)
    const kept = () => caches.open(CACHE).then((cache) => cache.match(url.pathname, { ignoreVary: true }));
    event.respondWith(fetch(request).catch(() => kept().then((hit) => hit ?? Response.error())));
  } else if (ASSETS.has(url.pathname)) {
    event.respondWith(
      caches
        .open(CACHE)
        .then((cache) => cache.match(url.pathname))
        .then((hit) => hit ?? fetch(request)),
    );
  }
});
