// Benchmark: the front page's first load as a new visitor gets it. Chromium (Debian's) loads `/` into
// an empty profile; every same-origin HTML, CSS and JavaScript response before the load event (and the
// message catalogs the page fetches under /locales/) is counted, raw and gzipped (as a compressing proxy or CDN would send it). Then, with the CPU slowed
// 4× over CDP (Emulation.setCPUThrottlingRate), the time to interactive: the later of
// DOMContentLoaded's end, the page's own ready mark (its strings loaded, the form wired: data-ready on
// the form) and the end of the last long task (> 50 ms) up to a quiet second after load,
// median of BENCH_WEB_ROUNDS fresh loads, for an English visitor and a German one (locale de-DE, so
// Accept-Language and navigator.languages say German; the page stays hidden until it is translated).
// Targets: < 100 KB compressed, < 1 s to interactive.
import os from 'node:os';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { fmt, formatLoad, requireTool, startBenchGateway } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_WEB_ROUNDS ?? 5);
const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const KINDS = new Set(['document', 'script', 'stylesheet']);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The front page's HTML, CSS and JS responses of one cold load: [{ url, kind, raw, gzip }]. */
async function firstLoad(browser, base, locale = 'en-US') {
  const context = await browser.newContext({ serviceWorkers: 'block', locale });
  const page = await context.newPage();
  const bodies = [];
  page.on('response', (res) => {
    const kind = res.request().resourceType();
    const catalog = kind === 'fetch' && res.url().startsWith(`${base}/locales/`);
    if ((KINDS.has(kind) || catalog) && res.url().startsWith(base))
      bodies.push(
        res
          .body()
          .then((body) => ({ url: res.url().slice(base.length), kind, raw: body.length, gzip: gzipSync(body).length })),
      );
  });
  await page.goto(`${base}/`, { waitUntil: 'load' });
  await page.locator('#front-form[data-ready]').waitFor();
  const files = await Promise.all(bodies);
  await context.close();
  return files;
}

/** Milliseconds from navigation to interactive under a 4× slower CPU, in a fresh context. */
async function timeToInteractive(browser, base, path = '/', locale = 'en-US') {
  const context = await browser.newContext({ locale });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  // Collected from the first script on (init scripts run over CDP, outside the page's CSP).
  await page.addInitScript(`window.__longTasks = [];
    new MutationObserver((_, observer) => {
      if (document.querySelector('#front-form[data-ready]')) { window.__ready = performance.now(); observer.disconnect(); }
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.startTime + e.duration); }).observe({ type: 'longtask', buffered: true });`);
  await page.goto(`${base}${path}`, { waitUntil: 'load' });
  // The front page marks itself ready; the playground (the baseline) is ready when its field is there.
  if (path === '/') await page.locator('#front-form[data-ready]').waitFor();
  else await page.getByLabel('Page or media URL').waitFor();
  await page.waitForTimeout(1000);
  const tti = await page.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return { tti: Math.max(nav.domContentLoadedEventEnd, window.__ready ?? 0, ...window.__longTasks), dcl: nav.domContentLoadedEventEnd, ready: window.__ready, tasks: window.__longTasks.length, taskEnds: window.__longTasks.map(Math.round) };
  })()`);
  await context.close();
  if (process.env.BENCH_WEB_DEBUG) console.error({ path, locale, ...tti });
  return tti.tti;
}

export async function benchWebApp() {
  requireTool(CHROMIUM, 'apt-get install chromium');
  const { startRedis } = await import('@reelay/testkit');
  const redis = await startRedis();
  let gateway;
  let browser;
  let files;
  let german;
  const times = [];
  const germanTimes = [];
  const baseline = [];
  try {
    gateway = await startBenchGateway({ REDIS_URL: redis.url });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    files = await firstLoad(browser, gateway.base);
    german = await firstLoad(browser, gateway.base, 'de-DE');
    // Interleaved with the baseline (the playground at /advanced, the front page before this one), so
    // all see the same machine load.
    for (let round = 0; round < ROUNDS; round++) {
      times.push(await timeToInteractive(browser, gateway.base, '/'));
      germanTimes.push(await timeToInteractive(browser, gateway.base, '/', 'de-DE'));
      baseline.push(await timeToInteractive(browser, gateway.base, '/advanced'));
    }
  } finally {
    await browser?.close();
    gateway?.child.kill('SIGTERM');
    await redis.stop();
  }
  const total = (key) => files.reduce((sum, f) => sum + f[key], 0);
  console.log(`\n## web app first load (the front page, empty profile, chromium)\n`);
  console.log('| file | kind | bytes | gzipped |');
  console.log('|---|---|---|---|');
  for (const f of files) console.log(`| ${f.url} | ${f.kind} | ${f.raw} | ${f.gzip} |`);
  console.log(`| total (${files.length} files) | | ${total('raw')} | ${total('gzip')} |`);
  const sum = (list, key) => list.reduce((n, f) => n + f[key], 0);
  console.log(
    `\na German visitor (de-DE): ${german.length} files, ${sum(german, 'raw')} bytes, ${sum(german, 'gzip')} gzipped`,
  );
  const tti = median(times);
  console.log(
    `\ntime to interactive with a 4× CPU slowdown: median ${fmt(tti, 0)} ms of ${times.length} loads (${times.map((t) => fmt(t, 0)).join(', ')}), fastest ${fmt(Math.min(...times), 0)} ms; load average ${formatLoad(os.loadavg())} on ${os.cpus().length} cores`,
  );
  const de = median(germanTimes);
  console.log(
    `a German visitor (de-DE), same run: median ${fmt(de, 0)} ms (${germanTimes.map((t) => fmt(t, 0)).join(', ')})`,
  );
  const base = median(baseline);
  console.log(
    `baseline, the playground (/advanced) in the same run: median ${fmt(base, 0)} ms (${baseline.map((t) => fmt(t, 0)).join(', ')}); front page / playground = ${fmt(tti / base, 2)}`,
  );
  console.log(
    `\ntarget: first load < 100 KB compressed: ${total('gzip') < 100 * 1024 ? 'met' : 'NOT met'} (${fmt(total('gzip') / 1024, 1)} KB)`,
  );
  console.log(
    `target: interactive < 1 s at 4× CPU slowdown: ${tti < 1000 ? 'met' : 'NOT met'} (German: ${de < 1000 ? 'met' : 'NOT met'})`,
  );
  return { files, german, times, germanTimes, baseline };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWebApp();
