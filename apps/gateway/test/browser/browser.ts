// Shared set-up of the browser tests: Debian's chromium driven by playwright-core (never a downloaded
// browser), the real gateway listening on 127.0.0.1, and where screenshots go. Without chromium the
// tests are skipped locally but fail in CI, where .ci/run installs it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from '@jest/globals';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createLogger } from '@reelay/observability';
import { describeWithTools, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, testConfig, type TestGateway } from '../helpers.js';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** `describe`, or `describe.skip` with a message when chromium is missing outside CI. */
export function describeBrowser(name: string, fn: () => void): void {
  describeWithTools(name, [{ bin: CHROMIUM, install: 'apt-get install chromium' }], fn);
}

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Script errors and console errors (CSP violations among them); 4xx answers are expected. */
  errors: string[];
  /**
   * Replaces the context with a new, empty one (no cookies, storage or history) and one page, so a
   * test never depends on what an earlier test left behind. Headers apply to every request of it.
   */
  fresh(options?: {
    headers?: Record<string, string>;
    permissions?: { names: string[]; origin: string };
    locale?: string;
  }): Promise<void>;
  close(): Promise<void>;
}

/** Chromium (one process per test file) with a fresh context and page; call fresh() before each test. */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const errors: string[] = [];
  const open = async (options: Parameters<TestBrowser['fresh']>[0] = {}) => {
    const context = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1200, height: 900 },
      locale: options.locale ?? 'en-GB',
      timezoneId: 'UTC',
      extraHTTPHeaders: options.headers,
    });
    if (options.permissions)
      await context.grantPermissions(options.permissions.names, { origin: options.permissions.origin });
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text())) errors.push(msg.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    return { context, page };
  };
  const first = await open();
  const handle: TestBrowser = {
    ...first,
    errors,
    fresh: async (options) => {
      await handle.context.close().catch(() => undefined);
      Object.assign(handle, await open(options));
    },
    close: async () => {
      await handle.context.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
    },
  };
  return handle;
}

export interface ServedGateway {
  gateway: TestGateway;
  base: string;
  close(): Promise<void>;
}

/** The real gateway on a free port of 127.0.0.1, as a browser reaches it. */
export async function serveGateway(options: Parameters<typeof buildGateway>[0] = {}): Promise<ServedGateway> {
  const gateway = await buildGateway(options);
  const server: Server = gateway.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  return {
    gateway,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}

export interface ServedBrowser {
  served: ServedGateway;
  browser: TestBrowser;
}

/**
 * A gateway without a worker and one chromium for a test file: started before its tests, closed after
 * them; each test ends with no page error (those `expected` matches aside: a test that goes offline
 * on purpose). Fields are set once beforeAll has run.
 */
export function useServedBrowser(expected?: RegExp): ServedBrowser {
  const stack = {} as ServedBrowser;
  beforeAll(async () => {
    stack.served = await serveGateway();
    stack.browser = await launchBrowser();
  });

  afterEach(() => {
    expect(stack.browser.errors.splice(0).filter((e) => !expected?.test(e))).toEqual([]);
  });

  afterAll(async () => {
    await stack.browser?.close();
    await stack.served?.close();
  });
  return stack;
}

/** Screenshots go to a temp folder (REELAY_SCREENSHOT_DIR to choose), never into the repository. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  const dir = process.env.REELAY_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'reelay-screenshots');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** What a playground test drives; filled in by the time its tests run. */
export interface PlaygroundStack {
  /** The test's origin, with the routes `routes` gave it. */
  origin: Origin;
  /** Two seconds of testsrc2 and a sine tone, in the shapes a page serves. */
  media: TestMedia;
  served: ServedGateway;
  browser: TestBrowser;
  /** The worker's data folder: where its artifacts are. */
  dataDir: string;
}

/**
 * The whole stack behind the playground, for the describe it is called in: an origin the test fills
 * (`routes`), the real gateway and a real worker on a queue and data folder of their own (with
 * `settings` beside the tests' own), and chromium. After each test the page must have logged
 * no errors; after all, everything stops.
 */
export function usePlaygroundStack(
  name: string,
  routes: (origin: Origin, media: TestMedia) => void,
  settings: Record<string, string> = {},
): PlaygroundStack {
  const stack = { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), `reelay-browser-${name}-`)) } as PlaygroundStack;
  const queuePrefix = `test-web-${name}-${randomBytes(4).toString('hex')}`;
  const env = { ...settings, DATA_DIR: stack.dataDir };
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    stack.media = await testMedia();
    stack.origin = await startOrigin();
    routes(stack.origin, stack.media);
    stack.served = await serveGateway({ env, deps: { queuePrefix } });
    worker = await startWorker({
      config: testConfig(env),
      logger: createLogger({ name: 'worker-test', level: 'silent' }),
      metricsPort: 0,
      prefix: queuePrefix,
      dataDir: stack.dataDir,
    });
    stack.browser = await launchBrowser();
  });

  afterEach(() => {
    expect(stack.browser.errors.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await stack.browser?.close();
    await worker?.stop();
    await stack.served?.close();
    await stack.origin?.close();
    fs.rmSync(stack.dataDir, { recursive: true, force: true });
  });
  return stack;
}
