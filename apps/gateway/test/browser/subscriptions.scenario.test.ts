// Subscriptions on the settings page in a real browser, against the real routes with the session
// cookie: subscribe to a local feed from the form, see it listed, pause and resume it, delete it
// after the confirmation; the API agrees at each step.
import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startOrigin, type Origin } from '@reelay/testkit';
import { describeBrowser, launchBrowser, serveGateway, type ServedGateway, type TestBrowser } from './browser.js';

let origin: Origin;
let served: ServedGateway;
let browser: TestBrowser;

const FEED = `<?xml version="1.0"?><rss version="2.0"><channel><title>Browser Radio</title>
<item><title>One</title><guid>b-1</guid><enclosure url="http://127.0.0.1:9/one.mp3" type="audio/mpeg" length="10"/></item></channel></rss>`;

describeBrowser('subscriptions on the settings page', () => {
  beforeAll(async () => {
    origin = await startOrigin();
    origin.body('/radio.xml', FEED, 'application/rss+xml');
    served = await serveGateway({ env: { TRUST_PROXY: 'true' } });
    browser = await launchBrowser();
    await browser.fresh({ headers: { 'X-Forwarded-For': `10.${[...randomBytes(3)].join('.')}` } });
  });

  afterEach(() => {
    expect(browser.errors.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await origin?.close();
  });

  test('subscribe, pause, resume and delete', async () => {
    const page = browser.page;
    const email = `subs-${randomBytes(6).toString('hex')}@example.com`;
    expect(
      (
        await browser.context.request.post(`${served.base}/account/signup`, {
          data: { email, password: 'correct horse battery' },
        })
      ).status(),
    ).toBe(201);
    await page.goto(`${served.base}/settings/api-keys`);
    await page.locator('#account-email', { hasText: email }).waitFor();
    await page.locator('#no-subs', { hasText: 'no subscriptions' }).waitFor();

    await page.getByLabel('Feed, playlist or channel address').fill(origin.url('/radio.xml'));
    await page.getByLabel('How often').selectOption('86400');
    await page.getByLabel('Audio only').check();
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const row = page.locator('#subs-body tr', { hasText: 'Browser Radio' });
    await row.waitFor();
    await row.getByText('Every day').waitFor();
    const list = async () =>
      (await (await browser.context.request.get(`${served.base}/api/v1/subscriptions`)).json()).data;
    expect(await list()).toMatchObject([
      { name: 'Browser Radio', every: 86400, preset: { audio_only: true }, status: 'active' },
    ]);

    await row.getByRole('button', { name: 'Pause' }).click();
    await row.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await list())[0].status).toBe('paused');
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.getByRole('button', { name: 'Pause' }).waitFor();
    expect((await list())[0].status).toBe('active');

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.locator('#no-subs', { hasText: 'no subscriptions' }).waitFor();
    expect(await list()).toEqual([]);

    // A URL that is not a collection: the server's message is shown by the form.
    await page.getByLabel('Feed, playlist or channel address').fill(`${origin.url('/radio.xml')}x`);
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.locator('#subs-form .form-error').filter({ hasText: /.+/ }).waitFor();
  }, 30_000);
});
