// What every page and state of the web app is held to in the browser tests: axe-core finds nothing
// critical or serious, at desktop and phone sizes, in the light and the dark theme; nothing is wider
// than a 360 px screen (open dialogs included); and a screenshot of each is written for a person to see.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { screenshot } from './browser.js';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;
export const THEMES = ['light', 'dark'] as const;

interface Finding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Picks a theme with the page's own switch in the top nav. */
export async function chooseTheme(page: Page, theme: 'light' | 'dark' | 'system'): Promise<void> {
  await page.locator('#theme-select').selectOption(theme);
  // Colours may fade over a transition (Swagger UI's do): audit the settled page.
  await page.evaluate('Promise.allSettled(document.getAnimations().map((a) => a.finished))');
}

/** axe-core's critical and serious findings on the page as it is now (evaluated over CDP: no CSP hole). */
export async function axeFindings(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE_SOURCE);
  return page.evaluate<
    Finding[]
  >(`axe.run(document, { resultTypes: ['violations'] }).then(({ violations }) => violations
    .filter((v) => v.impact === 'critical' || v.impact === 'serious')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 12).map((n) => n.target.join(' ')) })))`);
}

/** What sticks out of a 360 px wide viewport: the page's scroll width, and any open dialog's parts. */
export async function overflowAt360(page: Page): Promise<string[]> {
  const before = page.viewportSize();
  await page.setViewportSize({ width: 360, height: 740 });
  // (Browser code as a string: this file is type-checked without the DOM's types.)
  const problems = await page.evaluate<string[]>(`(() => {
    const found = [];
    const width = window.innerWidth;
    const scroll = document.scrollingElement.scrollWidth;
    if (scroll > width) found.push('page is ' + scroll + ' px wide');
    for (const el of document.querySelectorAll('dialog[open], dialog[open] *')) {
      const rect = el.getBoundingClientRect();
      if (rect.width > 0 && (rect.left < -0.5 || rect.right > width + 0.5)) found.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' spans ' + Math.round(rect.left) + '..' + Math.round(rect.right) + ' px');
    }
    return found;
  })()`);
  if (before) await page.setViewportSize(before);
  return problems;
}

/**
 * Audits the page in its current state at both sizes and both themes, writes a screenshot of each
 * (`<name>-<size>-<theme>.png`; the whole page unless fullPage is false, for very long pages), checks
 * 360 px, and returns every problem as a readable line.
 */
export async function auditPage(page: Page, name: string, { fullPage = true } = {}): Promise<string[]> {
  const problems: string[] = [];
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    for (const theme of THEMES) {
      await chooseTheme(page, theme);
      for (const f of await axeFindings(page))
        problems.push(`${name} ${size.name} ${theme}: ${f.id} (${f.impact}) ${f.help} — ${f.targets.join(', ')}`);
      await screenshot(page, `${name}-${size.name}-${theme}`, fullPage);
    }
  }
  for (const p of await overflowAt360(page)) problems.push(`${name} at 360 px: ${p}`);
  await chooseTheme(page, 'system');
  return problems;
}

/**
 * Words on the page that are not from the language's catalogs: every visible text node (and the
 * aria-label, placeholder, title and alt attributes, the options of selects and the document's title)
 * must match one of the catalog's strings, with any {{placeholder}} standing for any text, or be
 * only numbers, codes and format names. Left out: what the page marks translate="no" (the API's own
 * words, people's names for things, the API reference), <code>, <time> (checked by locale instead)
 * and `data` (strings the test itself put there, such as a page title or a key name).
 */
export async function untranslated(
  page: Page,
  catalogs: Array<Record<string, string>>,
  data: string[] = [],
): Promise<string[]> {
  const templates = catalogs
    .flatMap((catalog) => Object.values(catalog))
    .flatMap((text) => text.split(/<\/?\d+\/?>/))
    .map((piece) => piece.replace(/\s+/g, ' ').trim())
    .filter((piece) => /\p{L}{2}/u.test(piece.replace(/\{\{\s*\w+\s*\}\}/g, '')))
    .map(
      (piece) =>
        new RegExp(
          `^${piece
            .split(/\{\{\s*\w+\s*\}\}/)
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('.*?')}$`,
          'su',
        ),
    );
  const texts = await page.evaluate<string[]>(`(() => {
    const skip = 'script, style, noscript, code, time, [translate="no"], [hidden]';
    const shown = (el) => !el.closest(skip) && (el.closest('.visually-hidden, select, svg') || el.checkVisibility());
    const found = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement && shown(node.parentElement)) found.push(node.textContent);
    }
    for (const el of document.querySelectorAll('[aria-label], [placeholder], [title], [alt], optgroup[label]')) {
      if (!shown(el)) continue;
      for (const name of ['aria-label', 'placeholder', 'title', 'alt', 'label']) if (el.hasAttribute(name) && (name !== 'label' || el.tagName === 'OPTGROUP')) found.push(el.getAttribute(name));
    }
    return found;
  })()`);
  // Whole catalog strings, longest first, for texts that put a data value beside one ("720p · Nur Ton").
  const literals = [
    ...new Set(
      catalogs
        .flatMap((catalog) => Object.values(catalog))
        .flatMap((text) => text.split(/<\/?\d+\/?>|\{\{\s*\w+\s*\}\}/))
        .map((piece) => piece.trim()),
    ),
  ]
    .filter((piece) => /\p{L}{3}/u.test(piece))
    .sort((a, b) => b.length - a.length);
  const formats = /\b(?:mp4|webm|mkv|mp3|m4a|opus|wav|vtt|srt|reelay)\b/gi;
  const problems = new Set<string>();
  for (const raw of texts) {
    const text = raw.replace(/\s+/g, ' ').trim();
    if (!text || templates.some((template) => template.test(text))) continue;
    let rest = text;
    for (const value of [...data, ...literals]) rest = rest.split(value).join(' ');
    rest = rest
      .replace(/https?:\/\/\S+/g, ' ')
      .replace(/\S*\d\S*/g, ' ')
      .replace(formats, ' ');
    if (/\p{L}{3}/u.test(rest)) problems.add(text);
  }
  return [...problems];
}
