// The app's layout where a newcomer met it badly, measured in a real browser: on a phone the top bar
// is two short rows on every page, in English and German (it took ~180 px, "API reference" alone on a
// third row); API key rows keep their buttons on one line; deleting the account stands apart as a
// danger zone.
import { randomBytes } from 'node:crypto';
import { expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { screenshot } from './browser.js';
import { describeBrowser, useServedBrowser } from './browser.js';

const PAGES = ['/', '/advanced', '/settings/api-keys', '/docs'];

/** The top bar's parts as the page lays them out (browser code as a string: no DOM types here). */
function headerBoxes(page: Page) {
  return page.evaluate<{ height: number; links: number[]; row: number[] }>(`(() => {
    const box = (el) => el.getBoundingClientRect();
    const middle = (el) => box(el).top + box(el).height / 2;
    const header = document.querySelector('.site-header');
    return {
      height: box(header).height,
      links: [...header.querySelectorAll('nav a')].map((a) => box(a).top),
      row: [header.querySelector('.brand'), document.getElementById('theme-select'), document.getElementById('language-select')].map(middle),
    };
  })()`);
}

/**
 * Each key row's buttons, by their tops (one line is one distinct top), and how many of them stick out
 * of the table's box, where they could only be seen by scrolling it sideways.
 */
function buttonLines(page: Page) {
  return page.evaluate<{ lines: number[]; hidden: number }>(`(() => {
    const wrap = document.querySelector('#keys-table').closest('.table-wrap').getBoundingClientRect();
    const buttons = [...document.querySelectorAll('#keys-body td.actions button')];
    return {
      lines: [...document.querySelectorAll('#keys-body tr')].map((tr) => new Set([...tr.querySelectorAll('td.actions button')].map((b) => Math.round(b.getBoundingClientRect().top))).size),
      hidden: buttons.filter((b) => b.getBoundingClientRect().right > wrap.right + 0.5).length,
    };
  })()`);
}

describeBrowser('the layout a newcomer sees', () => {
  const stack = useServedBrowser();

  test.each([
    ['en-GB', 'en'],
    ['de-DE', 'de'],
  ])('on a phone (%s) the top bar is two short rows on every page', async (locale, lang) => {
    await stack.browser.fresh({ locale });
    const { page } = stack.browser;
    const problems: string[] = [];
    for (const width of [390, 360]) {
      await page.setViewportSize({ width, height: 844 });
      for (const path of PAGES) {
        await page.goto(`${stack.served.base}${path}`);
        await page.locator(`html[lang="${lang}"]:not(.i18n-pending)`).waitFor({ state: 'attached' });
        const { height, links, row } = await headerBoxes(page);
        const where = `${path} at ${width} px in ${lang}`;
        if (height > 104) problems.push(`${where}: the top bar is ${Math.round(height)} px tall`);
        if (Math.max(...links) - Math.min(...links) > 1) problems.push(`${where}: the links take more than one row`);
        if (Math.max(...row) - Math.min(...row) > 4)
          problems.push(`${where}: the brand and the switches are not in one row`);
        if (width === 390)
          await screenshot(
            page,
            `header-${lang}-${path === '/' ? 'front' : path.slice(1).replace(/\W+/g, '-')}-phone`,
            false,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  test('API key rows keep their buttons on one line, and deleting the account stands apart', async () => {
    await stack.browser.fresh();
    const { page, context } = stack.browser;
    const base = stack.served.base;
    const email = `layout-${randomBytes(6).toString('hex')}@example.com`;
    expect(
      (
        await context.request.post(`${base}/account/signup`, { data: { email, password: 'correct horse battery' } })
      ).status(),
    ).toBe(201);
    for (const name of ['production server with a rather long name', 'ci-bot'])
      expect((await context.request.post(`${base}/account/keys`, { data: { name } })).status()).toBe(201);
    await page.goto(`${base}/settings/api-keys`);
    await page.getByRole('rowheader', { name: 'ci-bot' }).waitFor();
    for (const [lng, size] of [
      ['en', { width: 1280, height: 800 }],
      ['en', { width: 390, height: 844 }],
      ['de', { width: 1280, height: 800 }],
      ['de', { width: 360, height: 740 }],
    ] as const) {
      await page.evaluate(`import('/assets/i18n.js').then((m) => m.setLanguage('${lng}'))`);
      await page.setViewportSize(size);
      await page.locator(`html[lang="${lng}"]`).waitFor({ state: 'attached' });
      await screenshot(page, `settings-keys-${lng}-${size.width}`);
      expect({ lng, ...size, ...(await buttonLines(page)) }).toEqual({ lng, ...size, lines: [1, 1], hidden: 0 });
    }

    // The delete form is framed in the danger colour, its heading in it, and set off from the password form.
    const zone = page.locator('#delete-account-form');
    await zone.waitFor();
    const look = await page.evaluate<{ heading: string; danger: string; border: string; gap: number }>(`(() => {
      const zone = document.getElementById('delete-account-form');
      const probe = document.createElement('span');
      probe.style.color = 'var(--danger)';
      document.body.append(probe);
      const danger = getComputedStyle(probe).color;
      probe.remove();
      return {
        heading: getComputedStyle(zone.querySelector('h3')).color,
        danger,
        border: getComputedStyle(zone).borderTopStyle + ' ' + getComputedStyle(zone).borderTopWidth,
        gap: zone.getBoundingClientRect().top - document.getElementById('password-form').getBoundingClientRect().bottom,
      };
    })()`);
    expect(look).toEqual({ heading: look.danger, danger: look.danger, border: 'solid 1px', gap: expect.any(Number) });
    expect(look.gap).toBeGreaterThanOrEqual(24);
    await zone.scrollIntoViewIfNeeded();
    await screenshot(page, 'settings-danger-zone-phone', false);
  });
});
