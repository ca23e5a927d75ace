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
  return page.evaluate<Finding[]>(`axe.run(document, { resultTypes: ['violations'] }).then(({ violations }) => violations
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
      for (const f of await axeFindings(page)) problems.push(`${name} ${size.name} ${theme}: ${f.id} (${f.impact}) ${f.help} — ${f.targets.join(', ')}`);
      await screenshot(page, `${name}-${size.name}-${theme}`, fullPage);
    }
  }
  for (const p of await overflowAt360(page)) problems.push(`${name} at 360 px: ${p}`);
  await chooseTheme(page, 'system');
  return problems;
}
