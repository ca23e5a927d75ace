// Subscriptions on the settings page in a real browser, against the real routes with the session
// cookie and a real worker: subscribe to a local feed from the form (which comes back to its default
// interval), see when it is checked, check it now when an episode appears, open its items and save
// the one it downloaded; on a phone every value has its label; pause, resume and delete it; the API
// agrees at each step.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { expect, test } from '@jest/globals';
import type { Origin } from '@reelay/testkit';
import { auditPage } from './audit.js';
import { describeBrowser, usePlaygroundStack } from './browser.js';

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

/** The feed with its first `count` episodes (each the same tone, under its own URL). */
function radio(origin: Origin, count: number): string {
  const items = Array.from(
    { length: count },
    (_, i) =>
      `<item><title>Episode ${i + 1}</title><guid>radio-${i + 1}</guid><enclosure url="${origin.url(`/radio/${i + 1}.m4a`)}" type="audio/mp4" length="1000"/></item>`,
  );
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>Browser Radio</title>${items.join('')}</channel></rss>`;
}

describeBrowser('subscriptions on the settings page', () => {
  const stack = usePlaygroundStack(
    'subscriptions',
    (origin, media) => {
      for (const n of [1, 2]) origin.file(`/radio/${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
      origin.body('/radio.xml', radio(origin, 1), 'application/rss+xml');
    },
    { TRUST_PROXY: 'true' },
  );

  test('subscribe, see when it is checked, check now, open its items and save one, pause, resume and delete', async () => {
    // An address of its own: sign-ups are limited per client address.
    await stack.browser.fresh({ headers: { 'X-Forwarded-For': `10.${[...randomBytes(3)].join('.')}` } });
    const { page, context } = stack.browser;
    const base = stack.served.base;
    const email = `subs-${randomBytes(6).toString('hex')}@example.com`;
    expect(
      (
        await context.request.post(`${base}/account/signup`, { data: { email, password: 'correct horse battery' } })
      ).status(),
    ).toBe(201);
    await page.goto(`${base}/settings/api-keys`);
    await page.locator('#account-email', { hasText: email }).waitFor();
    await page.locator('#no-subs', { hasText: 'no subscriptions' }).waitFor();
    const every = page.getByLabel('How often');
    await expect(every.inputValue()).resolves.toBe('3600');

    await page.getByLabel('Feed, playlist or channel address').fill(stack.origin.url('/radio.xml'));
    await every.selectOption('86400');
    await page.getByLabel('Audio only').check();
    await page.getByRole('button', { name: 'Subscribe' }).click();
    // (The first: the row below it lists its items.)
    const row = page.locator('#subs-body tr', { hasText: 'Browser Radio' }).first();
    await row.waitFor();
    // The form is ready for the next one at its default, "Every hour" (it showed the first choice).
    await expect(every.inputValue()).resolves.toBe('3600');
    await expect(every.locator('option:checked').innerText()).resolves.toBe('Every hour');
    // How often, and when next; not yet checked since.
    const checks = row.locator('td').nth(1);
    await expect(checks.innerText()).resolves.toMatch(/^Every day\s+Next: \d+ \w+, \d\d:\d\d$/);
    await expect(row.locator('td').nth(2).innerText()).resolves.toBe('Not yet');
    const list = async () => (await (await context.request.get(`${base}/api/v1/subscriptions`)).json()).data;
    const [created] = await list();
    expect(created).toMatchObject({
      name: 'Browser Radio',
      every: 86400,
      preset: { audio_only: true },
      status: 'active',
    });

    // A new episode: Check now downloads it, and the items list it until it can be saved.
    stack.origin.body('/radio.xml', radio(stack.origin, 2), 'application/rss+xml');
    await row.getByRole('button', { name: 'Check now: “Browser Radio”' }).click();
    await page
      .locator('#subs-status')
      .filter({ hasText: '“Browser Radio” has 1 new entry: it is being downloaded.' })
      .waitFor();
    const items = page.getByRole('list', { name: 'Items of “Browser Radio”' });
    const save = items.getByRole('link', { name: 'Save “Episode 2”' });
    await save.waitFor({ timeout: 30_000 });
    await expect(items.locator('li').first().innerText()).resolves.toMatch(/^Episode 2\s+Downloaded · /);
    await page
      .locator('#subs-body tr', { hasText: '1 downloaded' })
      .getByRole('button', { name: 'Hide items of “Browser Radio”' })
      .waitFor();
    await page.getByText('1 entry that was there before you subscribed was not downloaded.').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), save.click()]);
    const [item] = (
      (await (await context.request.get(`${base}/api/v1/subscriptions/${created.id}/items`)).json()).data as Array<{
        job_id?: string;
      }>
    ).filter((i) => i.job_id);
    const artifact = Buffer.from(
      await (await context.request.get(`${base}/api/v1/jobs/${item.job_id}/artifact`)).body(),
    );
    expect(sha(fs.readFileSync((await download.path())!))).toBe(sha(artifact));
    expect(download.suggestedFilename()).toMatch(/^Episode 2\.\w+$/);
    await expect(row.locator('td').nth(2).innerText()).resolves.not.toBe('Not yet');

    // On a phone the values stack, each with its label (as the keys list has them).
    await page.setViewportSize({ width: 390, height: 844 });
    // (Browser code as a string: this file is type-checked without the DOM's types.)
    const labels = await page.evaluate<string[]>(
      `[...document.querySelector('#subs-body tr').querySelectorAll('td:not(.actions)')].map((td) => getComputedStyle(td, '::before').content)`,
    );
    expect(labels).toEqual(['"Status: "', '"Checks: "', '"Last check: "', '"Items: "']);
    const problems = await auditPage(page, 'settings-subscriptions');

    await row.getByRole('button', { name: 'Pause' }).click();
    await row.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await list())[0].status).toBe('paused');
    await expect(row.locator('td').nth(1).innerText()).resolves.toBe('Every day');
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.getByRole('button', { name: 'Pause' }).waitFor();
    expect((await list())[0].status).toBe('active');

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.locator('#no-subs', { hasText: 'no subscriptions' }).waitFor();
    expect(await list()).toEqual([]);

    // A URL that is not a collection: the server's message is shown by the form.
    await page.getByLabel('Feed, playlist or channel address').fill(`${stack.origin.url('/radio.xml')}x`);
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.locator('#subs-form .form-error').filter({ hasText: /.+/ }).waitFor();
    expect(problems).toEqual([]);
  }, 90_000);
});
