// @ts-check
// Messages by language, until the i18next-based module lands (branch web-i18n): the same small API —
// `t('namespace:key', vars)`, `ready`, `formatNumber(n)` — over the same flat JSON catalogs at
// /locales/<language>/<namespace>.json. Static text is marked `data-i18n="ns:key"` (or
// `data-i18n="[aria-label]ns:key"` for an attribute; several separated by `;`) and filled in on load.

const SUPPORTED = ['en', 'de'];
const FALLBACK = 'en';
const LANGUAGE_KEY = 'reelay-language';

/** The visitor's remembered language, else the browser's first supported one, else English. */
function pickLanguage() {
  let stored = null;
  try {
    stored = window.localStorage.getItem(LANGUAGE_KEY);
  } catch {
    // Storage refused: the browser's languages decide.
  }
  const wanted = [stored, ...(navigator.languages ?? [navigator.language])].filter(Boolean);
  for (const tag of wanted) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (SUPPORTED.includes(base)) return base;
  }
  return FALLBACK;
}

export const language = pickLanguage();

/** @type {Record<string, Record<string, string>>} namespace → key → message, in `language` */
const catalogs = {};
/** @type {Record<string, Record<string, string>>} the same in English, for keys a translation lacks */
const fallbacks = {};

async function fetchCatalog(lng, ns) {
  try {
    const res = await fetch(`/locales/${lng}/${ns}.json`, { credentials: 'same-origin' });
    return res.ok ? await res.json() : {};
  } catch {
    return {};
  }
}

/** The namespaces the page names in its data-i18n attributes, and `front`. */
function namespacesInPage() {
  const found = new Set(['front']);
  for (const node of document.querySelectorAll('[data-i18n]')) {
    for (const part of (node.getAttribute('data-i18n') ?? '').split(';')) {
      const match = /^(?:\[[^\]]+\])?([a-z][a-z0-9-]*):/.exec(part.trim());
      if (match) found.add(match[1]);
    }
  }
  return [...found];
}

const plurals = new Intl.PluralRules(language);
const numbers = new Intl.NumberFormat(language);

function lookup(ns, key) {
  return catalogs[ns]?.[key] ?? fallbacks[ns]?.[key];
}

/**
 * The message for `ns:key` with `{{name}}` filled from vars; with `vars.count`, the plural form
 * `key_one`/`key_other` (i18next's suffixes) comes first. An unknown key gives the key itself.
 * @param {string} fullKey @param {Record<string, unknown>} [vars]
 */
export function t(fullKey, vars = {}) {
  const split = fullKey.indexOf(':');
  const ns = split > 0 ? fullKey.slice(0, split) : 'front';
  const key = split > 0 ? fullKey.slice(split + 1) : fullKey;
  const count = typeof vars.count === 'number' ? vars.count : undefined;
  const message = (count !== undefined ? lookup(ns, `${key}_${plurals.select(count)}`) ?? lookup(ns, `${key}_other`) : undefined) ?? lookup(ns, key);
  if (message === undefined) return fullKey;
  return message.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (_, name) => {
    const value = vars[name];
    if (value === undefined || value === null) return '';
    return typeof value === 'number' ? formatNumber(value) : String(value);
  });
}

/** A number as the visitor's language writes it. @param {number} n */
export function formatNumber(n) {
  return numbers.format(n);
}

/** Fills every data-i18n element under root. @param {ParentNode} root */
export function translate(root = document) {
  for (const node of root.querySelectorAll('[data-i18n]')) {
    for (const part of (node.getAttribute('data-i18n') ?? '').split(';')) {
      const match = /^(?:\[([^\]]+)\])?(.+)$/.exec(part.trim());
      if (!match) continue;
      const [, attribute, key] = match;
      if (attribute) node.setAttribute(attribute, t(key));
      else node.textContent = t(key);
    }
  }
}

/** Resolves once the catalogs are loaded and the page's marked text is in the visitor's language. */
export const ready = (async () => {
  const namespaces = namespacesInPage();
  await Promise.all(
    namespaces.map(async (ns) => {
      const [own, english] = await Promise.all([fetchCatalog(language, ns), language === FALLBACK ? Promise.resolve(null) : fetchCatalog(FALLBACK, ns)]);
      catalogs[ns] = own;
      if (english) fallbacks[ns] = english;
    }),
  );
  document.documentElement.lang = language;
  translate(document);
})();
