// Where the front page's time to interactive goes: one cold load of a page (default /) under the same
// 4× CPU slowdown as bench/web-app.mjs, with a chromium performance trace taken over CDP (Tracing).
// Prints the renderer main thread's tasks of more than BENCH_TRACE_MIN_MS (default 5) ms — when each
// started after navigation, how long it ran, and what ran inside it (HTML parsing, script compile and
// evaluation, style, layout) — then each resource's request → response end, and the page's marks
// (DOMContentLoaded, the form's ready mark, load). A tool for looking, not a benchmark: one load, no
// median. Usage: node bench/web-trace.mjs [path] [locale]  (needs `pnpm -s build`).
import { chromium } from 'playwright-core';
import { fmt, requireTool, startBenchGateway } from './lib.mjs';

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
const CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'v8.execute',
  'blink.user_timing',
  'loading',
  'toplevel',
];
const MIN_MS = Number(process.env.BENCH_TRACE_MIN_MS ?? 5);
/** Inner events worth naming, with a short label. */
const INNER = new Map([
  ['ParseHTML', 'parse HTML'],
  ['v8.compile', 'compile'],
  ['v8.compileModule', 'compile module'],
  ['v8.evaluateModule', 'evaluate module'],
  ['EvaluateScript', 'script'],
  ['FunctionCall', 'function'],
  ['v8.run', 'run'],
  ['UpdateLayoutTree', 'style'],
  ['Layout', 'layout'],
  ['Paint', 'paint'],
  ['PrePaint', 'pre-paint'],
  ['MajorGC', 'GC'],
  ['MinorGC', 'GC'],
  ['V8.GC_SCAVENGER', 'GC'],
]);

async function trace(base, path, locale) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  try {
    const context = await browser.newContext({ locale });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
    await page.addInitScript(`new MutationObserver((_, observer) => {
      if (document.querySelector('#front-form[data-ready]')) { performance.mark('front-ready'); observer.disconnect(); }
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });`);
    const events = [];
    cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.start', { traceConfig: { includedCategories: CATEGORIES }, transferMode: 'ReportEvents' });
    // The page's JavaScript by function, sampled (a second session: the first one traces).
    const profiler = await context.newCDPSession(page);
    await profiler.send('Profiler.enable');
    await profiler.send('Profiler.setSamplingInterval', { interval: 200 });
    await profiler.send('Profiler.start');
    await page.goto(`${base}${path}`, { waitUntil: 'load' });
    if (path === '/') await page.locator('#front-form[data-ready]').waitFor();
    await page.waitForTimeout(1000);
    const timing = await page.evaluate(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      return {
        dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
        ready: performance.getEntriesByName('front-ready')[0]?.startTime,
        resources: performance.getEntriesByType('resource').map((r) => ({ name: new URL(r.name).pathname, start: r.startTime, end: r.responseEnd, size: r.encodedBodySize })),
      };
    })()`);
    const { profile } = await profiler.send('Profiler.stop');
    await cdp.send('Tracing.end');
    await complete;
    await context.close();
    return { events, timing, profile };
  } finally {
    await browser.close();
  }
}

/** The functions with the most self time in the sampled profile, by file. */
function hotFunctions(profile, top = Number(process.env.BENCH_TRACE_TOP ?? 15)) {
  const interval = new Map();
  for (let i = 0; i < profile.samples.length; i++)
    interval.set(profile.samples[i], (interval.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  const self = new Map();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\//, '')}:${lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + (interval.get(node.id) ?? 0));
  }
  console.log(`\n## JavaScript self time (sampled), top ${top}\n`);
  for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${fmt(ms, 1).padStart(7)} ms  ${name}`);
}

function report({ events, timing, profile }) {
  hotFunctions(profile);
  // The page's main thread: the one its navigationStart mark was recorded on.
  const start =
    events.find((e) => e.name === 'navigationStart' && e.args?.data?.isLoadingMainFrame) ??
    events.find((e) => e.name === 'navigationStart');
  const main = events.filter((e) => e.pid === start.pid && e.tid === start.tid && e.ph === 'X');
  const ms = (us) => (us - start.ts) / 1000;
  const tasks = main.filter((e) => e.name === 'RunTask' && e.ts >= start.ts && e.dur / 1000 >= MIN_MS);
  console.log(`\n## main-thread tasks ≥ ${MIN_MS} ms (ms after navigation start, 4× CPU slowdown)\n`);
  console.log('| start | duration | inside |');
  console.log('|---|---|---|');
  let busy = 0;
  for (const task of tasks) {
    busy += task.dur / 1000;
    const inner = new Map();
    for (const e of main) {
      const label = INNER.get(e.name) ?? (process.env.BENCH_TRACE_ALL ? e.name : undefined);
      if (!label || e === task || e.ts < task.ts || e.ts + e.dur > task.ts + task.dur) continue;
      const what =
        e.name === 'v8.compileModule' || e.name === 'EvaluateScript' || e.name === 'v8.compile'
          ? `${label} ${String(e.args?.data?.url ?? e.args?.fileName ?? '').replace(/^.*\//, '')}`
          : label;
      inner.set(what, (inner.get(what) ?? 0) + e.dur / 1000);
    }
    const top = [...inner]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([what, d]) => `${what} ${fmt(d, 1)}`);
    console.log(`| ${fmt(ms(task.ts), 0)} | ${fmt(task.dur / 1000, 1)} | ${top.join('; ')} |`);
  }
  console.log(`\n${tasks.length} tasks, ${fmt(busy, 0)} ms busy`);
  // Thread time (tdur) is the CPU the main thread really got: less swayed by the machine's load than
  // wall time, and unscaled by the slowdown. Summed over every task up to the marks.
  const cpuUntil = (at) =>
    main
      .filter((e) => e.name === 'RunTask' && e.ts >= start.ts && ms(e.ts) < at)
      .reduce((n, e) => n + (e.tdur ?? 0) / 1000, 0);
  console.log(
    `main-thread CPU (thread time): ${fmt(cpuUntil(timing.dcl), 0)} ms to DOMContentLoaded, ${fmt(cpuUntil(Math.max(timing.dcl, timing.ready ?? 0)), 0)} ms to ready, ${fmt(cpuUntil(Infinity), 0)} ms in all`,
  );
  console.log('\n## resources (request start → response end, ms)\n');
  for (const r of timing.resources)
    console.log(`${fmt(r.start, 0).padStart(6)} → ${fmt(r.end, 0).padStart(6)}  ${r.name} (${r.size} B)`);
  console.log(
    `\nDOMContentLoaded end ${fmt(timing.dcl, 0)} ms; ready mark ${timing.ready === undefined ? '—' : fmt(timing.ready, 0)} ms; load end ${fmt(timing.load, 0)} ms`,
  );
}

requireTool(CHROMIUM, 'apt-get install chromium');
const { startRedis } = await import('@reelay/testkit');
const redis = await startRedis();
let gateway;
try {
  gateway = await startBenchGateway({ REDIS_URL: redis.url });
  report(await trace(gateway.base, process.argv[2] ?? '/', process.argv[3] ?? 'en-US'));
} finally {
  gateway?.child.kill('SIGTERM');
  await redis.stop();
}
