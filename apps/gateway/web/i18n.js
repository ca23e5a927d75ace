// @ts-check
// Every page's words come from here: i18next (served by the gateway from node_modules, no build step)
// with flat JSON catalogs at /locales/<language>/<namespace>.json. The language is the visitor's
// remembered choice, else the first of the browser's languages that the app has, else English; the
// header's language switch changes it without a reload (pages listen for 'reelay:language').
// Keys are 'namespace:key'; the catalogs are flat (dots in keys are part of the name).
// The gateway puts the page's catalogs for English and the browser's language into the page itself
// (<script type="application/json" id="i18n-catalogs">), so the usual visitor's words need no request;
// only another language (a remembered choice, a switch) is fetched.
import i18next from './i18next.js';

/** The languages with complete catalogs (a test holds every catalog to English's keys). */
export const LANGUAGES = ['en', 'de'];
/** Every namespace; a page may load fewer with <html data-i18n-ns="common settings">. */
export const NAMESPACES = ['common', 'front', 'playground', 'settings'];
export const LANGUAGE_KEY = 'reelay-language';
const FALLBACK = 'en';
/** Fired on window after a switch, once the static text is translated: re-render what was built. */
export const LANGUAGE_EVENT = 'reelay:language';

/** The visitor's language: remembered, else the browser's first one we have, else English. */
export function detectLanguage() {
  let stored = null;
  try {
    stored = window.localStorage.getItem(LANGUAGE_KEY);
  } catch {
    // Storage refused: the browser's languages decide.
  }
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const primary = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.includes(primary)) return primary;
  }
  return FALLBACK;
}

function pageNamespaces() {
  const declared = document.documentElement.dataset.i18nNs?.split(/\s+/).filter((ns) => NAMESPACES.includes(ns));
  return declared?.length ? declared : NAMESPACES;
}

/** The catalogs the gateway inlined in the page, as i18next's `resources` ({} when there are none). */
function inlinedCatalogs() {
  try {
    return JSON.parse(document.getElementById('i18n-catalogs')?.textContent ?? '{}') ?? {};
  } catch {
    return {}; // Unreadable: fetched like any other language.
  }
}

/** One language's catalogs; a namespace this build has not got (404) is left out, English fills in. */
async function loadLanguage(lng) {
  if (i18next.isInitialized && pageNamespaces().every((ns) => i18next.hasResourceBundle(lng, ns))) return;
  await Promise.all(
    pageNamespaces().map(async (ns) => {
      const res = await fetch(`/locales/${lng}/${ns}.json`, { credentials: 'same-origin' }).catch(() => null);
      const catalog = res?.ok ? await res.json().catch(() => null) : null;
      if (catalog) i18next.addResourceBundle(lng, ns, catalog, true, true);
    }),
  );
}

/**
 * The translation of 'namespace:key', with {{name}} filled from `vars`; `count` picks the plural, and
 * numbers are written the language's way (1.234 in German).
 */
export function t(/** @type {string} */ key, /** @type {Record<string, unknown>} */ vars = undefined) {
  if (!vars) return /** @type {string} */ (i18next.t(key));
  // i18next takes the plural from `count` and the words from `replace`, so count can be shown formatted.
  const replace = Object.fromEntries(
    Object.entries(vars).map(([name, value]) => [name, typeof value === 'number' ? formatNumber(value) : value]),
  );
  return /** @type {string} */ (
    i18next.t(key, typeof vars.count === 'number' ? { count: vars.count, replace } : { replace })
  );
}

/** The language in use ('en', 'de'). */
export function language() {
  return i18next.resolvedLanguage ?? i18next.language ?? FALLBACK;
}

/** The locale for numbers and dates: the browser's own variant of the language (en-GB), else the language. */
function locale() {
  const lng = language();
  return (navigator.languages ?? []).find((tag) => String(tag).toLowerCase().split('-')[0] === lng) ?? lng;
}

/** A number as the language writes it (1.234,5 in German). @param {number} n @param {Intl.NumberFormatOptions} [opts] */
export function formatNumber(n, opts) {
  return new Intl.NumberFormat(locale(), opts).format(n);
}

/** A date (or ISO string) as the language writes it. @param {Date | string | number} d @param {Intl.DateTimeFormatOptions} [opts] */
export function formatDate(d, opts) {
  return new Intl.DateTimeFormat(locale(), opts).format(d instanceof Date ? d : new Date(d));
}

// The original child elements of rich strings, so the text can be rebuilt in another language.
const templates = new WeakMap();

/**
 * A string with numbered tags — "see the <0>API reference</0> or <1/>" — built from the element's
 * own child elements in their original order: <0>…</0> is child 0 holding the text, <1/> is child 1
 * as it is. The elements themselves are moved, not copied, so ids, listeners and the pages' references
 * to them survive. No HTML is ever parsed, so a catalog cannot inject markup.
 * @param {Element} target @param {string} text
 */
function fillRich(target, text) {
  const children = templates.get(target);
  const nodes = [];
  for (const part of richParts(text)) {
    if (typeof part === 'string') nodes.push(part);
    else if (children[part[0]]) {
      if (part[1] !== undefined) children[part[0]].textContent = part[1];
      nodes.push(children[part[0]]);
    }
  }
  target.replaceChildren(...nodes);
}

/** A rich string's parts in order: text, or [child index, its text (undefined for <n/>)]. */
function richParts(text) {
  const parts = [];
  const tag = /<(\d+)>(.*?)<\/\1>|<(\d+)\/>/gs;
  let last = 0;
  for (let match = tag.exec(text); match; match = tag.exec(text)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push([Number(match[1] ?? match[3]), match[2]]);
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** Whether `target` already shows `text` as fillRich would build it (the English page in English). */
function showsRich(target, text) {
  const children = templates.get(target);
  const parts = richParts(text).filter((part) => typeof part === 'string' || children[part[0]]);
  const nodes = target.childNodes;
  return (
    nodes.length === parts.length &&
    parts.every((part, i) =>
      typeof part === 'string'
        ? nodes[i].nodeType === Node.TEXT_NODE && nodes[i].textContent === part
        : nodes[i] === children[part[0]] && (part[1] === undefined || nodes[i].textContent === part[1]),
    )
  );
}

/** Sets an attribute only when it changes (a write costs style work even when the value is the same). */
function setAttr(node, attr, value) {
  if (node.getAttribute(attr) !== value) node.setAttribute(attr, value);
}

/**
 * Translates `root` and everything in it: `data-i18n="ns:key"` sets the text (keeping child elements
 * as numbered tags, see fillRich); attributes come from `data-i18n-attr="aria-label:ns:key;
 * placeholder:ns:key"`, or from `[attr]ns:key` parts in data-i18n ("[label]front:formatVideo; …",
 * the form the front page was written with). A key no catalog has leaves the page's own text. Text
 * that is already right (the English page in English) is not written again.
 * @param {ParentNode} [root]
 */
export function applyTranslations(root = document) {
  const all = [...(root instanceof Element ? [root] : []), ...root.querySelectorAll('[data-i18n], [data-i18n-attr]')];
  for (const node of all) {
    for (const part of (node.getAttribute('data-i18n') ?? '').split(';')) {
      const [, attr, key] = /^(?:\[([^\]]+)\])?\s*(.*)$/.exec(part.trim());
      if (!key || !i18next.exists(key)) continue;
      if (attr) {
        setAttr(node, attr, t(key));
        continue;
      }
      const text = t(key);
      if (!templates.has(node) && node.children.length) templates.set(node, [...node.children]);
      if (templates.has(node)) {
        if (!showsRich(node, text)) fillRich(node, text);
      } else if (node.textContent !== text) node.textContent = text;
    }
    for (const pair of (node.getAttribute('data-i18n-attr') ?? '').split(';')) {
      const [attr, ...rest] = pair.trim().split(':');
      const attrKey = rest.join(':');
      if (attr && i18next.exists(attrKey)) setAttr(node, attr, t(attrKey));
    }
  }
}

/** The front page's first module named applyTranslations so: the same function. */
export const translate = applyTranslations;

function remember(lng) {
  try {
    window.localStorage.setItem(LANGUAGE_KEY, lng);
  } catch {
    // Not remembered; the page still switches.
  }
}

/** Puts the page in `lng`: catalogs, static text, <html lang>, the switch; then tells the page. */
async function show(lng) {
  await loadLanguage(lng);
  await i18next.changeLanguage(lng);
  if (document.documentElement.lang !== language()) document.documentElement.lang = language();
  applyTranslations(document);
  /** @type {HTMLSelectElement | null} */
  const select = document.querySelector('#language-select');
  if (select) select.value = language();
  // shell.js hid a page that is not in English until its words were here (no flash of English).
  document.documentElement.classList.remove('i18n-pending');
}

/** Switches the whole app to `lng` (one of LANGUAGES) and remembers it for every page. */
export async function setLanguage(/** @type {string} */ lng) {
  if (!LANGUAGES.includes(lng)) throw new Error(`No catalogs for the language "${lng}".`);
  remember(lng);
  await show(lng);
  window.dispatchEvent(new CustomEvent(LANGUAGE_EVENT, { detail: lng }));
}

/** Resolves once the visitor's language and English (the fallback) are loaded and the page translated. */
export const ready = (async () => {
  const lng = detectLanguage();
  await i18next.init({
    lng,
    fallbackLng: FALLBACK,
    supportedLngs: LANGUAGES,
    ns: pageNamespaces(),
    defaultNS: 'common',
    keySeparator: false,
    interpolation: { escapeValue: false }, // text goes into textContent, never into HTML
    resources: inlinedCatalogs(),
  });
  await Promise.all([loadLanguage(FALLBACK), lng === FALLBACK ? null : loadLanguage(lng)]);
  await show(lng);
})().catch((err) => {
  document.documentElement.classList.remove('i18n-pending');
  throw err;
});

/** The header's language switch: the page's own, or one added beside the theme switch. */
function languageSwitch() {
  /** @type {HTMLSelectElement | null} */
  let select = document.querySelector('#language-select');
  const header = document.querySelector('.site-header');
  if (!select && header) {
    select = document.createElement('select');
    select.id = 'language-select';
    for (const lng of LANGUAGES) {
      const option = new Option(t(`common:language.${lng}`), lng);
      option.lang = lng;
      option.dataset.i18n = `common:language.${lng}`;
      select.append(option);
    }
    const label = document.createElement('label');
    label.className = 'theme-switch';
    const text = document.createElement('span');
    text.dataset.i18n = 'common:language.label';
    text.textContent = t('common:language.label');
    label.append(text, ' ', select);
    (header.querySelector('.switches') ?? header).append(label);
  }
  if (select) select.value = language();
  return select;
}

if (typeof document !== 'undefined') {
  ready.then(() => {
    const select = languageSwitch();
    select?.addEventListener('change', () => void setLanguage(select.value));
  });
  // Another tab switched the language: follow it.
  window.addEventListener('storage', (event) => {
    if (event.key === LANGUAGE_KEY && LANGUAGES.includes(event.newValue)) {
      void show(event.newValue).then(() =>
        window.dispatchEvent(new CustomEvent(LANGUAGE_EVENT, { detail: event.newValue })),
      );
    }
  });
}
