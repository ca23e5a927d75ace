// deploy/ as an operator uses it: the alert rules pass promtool's checks and unit tests, the dashboard
// and the rules name only metrics the apps export, and Debian's real prometheus scrapes a running
// gateway and worker and answers queries about them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from '@jest/globals';
import { parseConfig } from '@reelay/config';
import { createGateway, GatewayMetrics } from '@reelay/gateway';
import { connectRedis, redisReady } from '@reelay/redis';
import { createLogger } from '@reelay/observability';
import { describeWithTools, freePort } from '@reelay/testkit';
import { startWorker, WorkerMetrics } from '@reelay/worker';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEPLOY = path.join(ROOT, 'deploy');
const ALERTS = path.join(DEPLOY, 'prometheus/alerts.yml');
const DASHBOARD = path.join(DEPLOY, 'grafana/reelay-dashboard.json');

const PROMETHEUS = { bin: 'prometheus', install: 'apt-get install prometheus' };
const PROMTOOL = { bin: 'promtool', install: 'apt-get install prometheus' };

const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

/** Every metric name the two apps export, with the series names histograms add. */
async function exportedNames(): Promise<Set<string>> {
  const names = new Set<string>(['up']);
  const logger = createLogger({ name: 'deploy-test', level: 'silent' });
  for (const registry of [new GatewayMetrics().registry, new WorkerMetrics(async () => ({}), logger).registry]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    }
  }
  return names;
}

function metricNamesIn(text: string): string[] {
  return [...new Set(text.match(/\breelay_[a-z0-9_]+/g) ?? [])];
}

test('the dashboard and the alert rules name only metrics the gateway and the worker export', async () => {
  const names = await exportedNames();
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  expect(exprs.length).toBeGreaterThan(15);
  const used = [...metricNamesIn(exprs.join('\n')), ...metricNamesIn(fs.readFileSync(ALERTS, 'utf8'))];
  expect(used.filter((name) => !names.has(name))).toEqual([]);
  // The panels are there: RED per route, extracts, queue, jobs by error code, streams, egress, replicas.
  for (const needle of [
    'reelay_http_requests_total',
    'reelay_extracts_total',
    'reelay_queue_jobs',
    'error_code',
    'reelay_stream_bytes_total',
    'reelay_proxy_blocked_total',
    'sum by (instance)',
  ]) {
    expect(exprs.some((e) => e.includes(needle))).toBe(true);
  }
});

describeWithTools('promtool', [PROMTOOL], () => {
  test('the alert rules pass `promtool check rules`', () => {
    const run = spawnSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8' });
    expect({ status: run.status, output: run.stdout + run.stderr }).toEqual({
      status: 0,
      output: expect.stringContaining('SUCCESS'),
    });
  });

  test('each alert fires on the series that should fire it and not on healthy ones (`promtool test rules`)', () => {
    const run = spawnSync('promtool', ['test', 'rules', 'alerts.test.yml'], {
      cwd: path.dirname(ALERTS),
      encoding: 'utf8',
    });
    expect({ status: run.status, output: run.stdout + run.stderr }).toEqual({
      status: 0,
      output: expect.stringContaining('SUCCESS'),
    });
  });

  test('the example scrape configuration passes `promtool check config`', () => {
    const run = spawnSync('promtool', ['check', 'config', path.join(DEPLOY, 'prometheus/prometheus.yml')], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
  });
});

describeWithTools('a real prometheus', [PROMETHEUS], () => {
  test('scrapes a running gateway and worker, and answers queries about requests, queue depth and targets', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-prom-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const prefix = `test-prom-${process.pid}`;
    const config = parseConfig({
      REDIS_URL: process.env.REDIS_URL,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      WORKER_CONCURRENCY: '1',
    });
    const logger = createLogger({ name: 'deploy-test', level: 'silent' });

    const redis = connectRedis(config.REDIS_URL!);
    await redisReady(redis);
    const gateway = createGateway({ config, redis, logger, queuePrefix: prefix });
    const server = gateway.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    cleanup.push(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await gateway.queue.obliterate({ force: true });
      await gateway.close();
      await redis.quit();
    });
    const worker = await startWorker({ config, logger, metricsPort: 0, prefix });
    cleanup.push(() => worker.stop());
    const gatewayTarget = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const workerTarget = new URL(worker.metricsUrl).host;
    // Some traffic to count, and a job waiting in the queue for the depth gauge.
    for (let i = 0; i < 3; i++) await fetch(`http://${gatewayTarget}/api/v1/platforms`);
    // Delayed, so the worker leaves it alone for the test's length.
    await gateway.queue.add('download', { placeholder: true }, { jobId: `prom-${process.pid}`, delay: 600_000 });

    const promDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-prometheus-'));
    cleanup.push(() => fs.rmSync(promDir, { recursive: true, force: true }));
    const promConfig = path.join(promDir, 'prometheus.yml');
    fs.writeFileSync(
      promConfig,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(ALERTS)}]`,
        'scrape_configs:',
        `  - { job_name: reelay-gateway, static_configs: [{ targets: ["${gatewayTarget}"] }] }`,
        `  - { job_name: reelay-worker, static_configs: [{ targets: ["${workerTarget}"] }] }`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    const prom: ChildProcess = spawn(
      'prometheus',
      [
        `--config.file=${promConfig}`,
        `--storage.tsdb.path=${path.join(promDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let promLog = '';
    prom.stderr!.setEncoding('utf8').on('data', (d: string) => (promLog = (promLog + d).slice(-4000)));
    const promExited = new Promise((r) => prom.once('exit', r));
    cleanup.push(async () => {
      prom.kill('SIGTERM');
      await promExited;
    });

    const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = (await res.json()) as {
        status: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      return body.status === 'success' ? body.data.result : [];
    };
    const deadline = Date.now() + 30_000;
    let up: Awaited<ReturnType<typeof query>> = [];
    while (Date.now() < deadline) {
      if (prom.exitCode !== null) throw new Error(`prometheus exited: ${promLog}`);
      up = await query('up == 1').catch(() => []);
      if (up.length === 2 && (await query('reelay_queue_jobs{state="delayed"} > 0').catch(() => [])).length === 1)
        break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(up.map((s) => s.metric.job).sort()).toEqual(['reelay-gateway', 'reelay-worker']);
    const requests = await query(
      'sum by (route) (reelay_http_requests_total{job="reelay-gateway", route="/api/v1/platforms"})',
    );
    expect(Number(requests[0]?.value[1])).toBeGreaterThanOrEqual(3);
    const delayed = await query('reelay_queue_jobs{job="reelay-worker", state="delayed"}');
    expect(Number(delayed[0]?.value[1])).toBe(1);
    // The rules loaded and evaluate against live series.
    const rules = (await (await fetch(`http://127.0.0.1:${port}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string; health: string }[] }[] };
    };
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    expect(loaded.length).toBe(8);
    expect(loaded.filter((r) => r.health === 'err')).toEqual([]);
  }, 60_000);
});
