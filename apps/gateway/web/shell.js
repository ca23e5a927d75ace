// @ts-check
// What every page shares, loaded as a classic script in <head> so the theme is set before the first
// paint (no flash of the wrong colours): the light/dark/system theme and its switch in the top nav, and
// the service worker that makes the app installable and its shell work offline. The language itself
// is i18n.js's (a module, so it runs later): here a page that will not be in English is only hidden
// until its words are in, so no English flashes first.

const THEME_KEY = 'reelay-theme';
const CHOICES = ['system', 'light', 'dark'];
const darkQuery = window.matchMedia('(prefers-color-scheme: dark)');

/** The visitor's choice: 'system' unless one was remembered (storage may be blocked). */
function themeChoice() {
  let stored = null;
  try {
    stored = window.localStorage.getItem(THEME_KEY);
  } catch {
    // Storage refused (private mode, policy): the system theme, not remembered.
  }
  return CHOICES.includes(stored) ? stored : 'system';
}

/** Puts the resolved theme on <html data-theme>, which app.css's custom properties follow. */
function applyTheme(choice) {
  const dark = choice === 'dark' || (choice === 'system' && darkQuery.matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  // Swagger UI's own dark styles (the API reference) hang on this class.
  document.documentElement.classList.toggle('dark-mode', dark);
}

applyTheme(themeChoice());

// The same choice as i18n.js's detectLanguage (remembered, else the browser's first language we have).
(() => {
  let lng = null;
  try {
    lng = window.localStorage.getItem('reelay-language');
  } catch {
    // Storage refused: the browser's languages decide.
  }
  const ours = ['en', 'de'];
  if (!ours.includes(lng))
    lng =
      (navigator.languages ?? [])
        .map((tag) => String(tag).toLowerCase().split('-')[0])
        .find((tag) => ours.includes(tag)) ?? 'en';
  if (lng === 'en') return;
  const root = document.documentElement;
  root.lang = lng;
  root.classList.add('i18n-pending');
  // Never a blank page: if the catalogs cannot be had, the English page shows after a moment.
  setTimeout(() => root.classList.remove('i18n-pending'), 3000);
})();
darkQuery.addEventListener('change', () => applyTheme(themeChoice()));

document.addEventListener('DOMContentLoaded', () => {
  /** @type {HTMLSelectElement | null} */
  const select = document.querySelector('#theme-select');
  if (select) {
    select.value = themeChoice();
    select.addEventListener('change', () => {
      try {
        window.localStorage.setItem(THEME_KEY, select.value);
      } catch {
        // Not remembered; the page still switches.
      }
      applyTheme(select.value);
    });
  }
});

// Another tab switched the theme: follow it.
window.addEventListener('storage', (event) => {
  if (event.key !== THEME_KEY) return;
  applyTheme(themeChoice());
  /** @type {HTMLSelectElement | null} */
  const select = document.querySelector('#theme-select');
  if (select) select.value = themeChoice();
});

if ('serviceWorker' in navigator) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => {
      // No service worker (blocked or insecure origin): the app works, only not offline.
    });
  });
}

// A button disabled while its request runs loses the keyboard focus (the browser moves it to the
// page), so a keyboard user pressing Enter would be thrown back to the top. When the last focused
// control is enabled again and nothing else has taken the focus, it gets the focus back.
let lastFocused = null;
document.addEventListener('focusin', (event) => {
  lastFocused = event.target;
});
new MutationObserver((mutations) => {
  for (const { target } of mutations) {
    const control = /** @type {HTMLButtonElement} */ (target);
    const nobody = document.activeElement === null || document.activeElement === document.body;
    if (control === lastFocused && !control.disabled && control.isConnected && nobody) control.focus();
  }
}).observe(document, { attributes: true, attributeFilter: ['disabled'], subtree: true });
