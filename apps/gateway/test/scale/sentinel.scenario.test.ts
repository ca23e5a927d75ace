// Redis failover with Sentinel: a primary, a replica and 3 sentinels on 127.0.0.1 (Debian's
// redis-server and redis-sentinel). The primary is SIGKILLed under load; the gateway and the worker,
// configured with REDIS_SENTINELS, follow the promoted replica without a restart and every job
// completes. The seconds the gateway answered 503 are measured.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@reelay/observability';
import {
  describeWithTools,
  freePort,
  startOrigin,
  testMedia,
  testRedisClient,
  type Origin,
  type TestMedia,
} from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { connectRedis, redisReady } from '@reelay/redis';
import { buildGateway, testConfig, type TestGateway } from '../helpers.js';

const NAME = 'reelay-test';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-sentinel-'));
const children: ChildProcess[] = [];
let primary: ChildProcess;
let primaryPort: number;
let replicaPort: number;
let sentinelPorts: number[] = [];
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;
let server: import('node:http').Server;
let base: string;

function spawnRedis(args: string[], ready: string): Promise<ChildProcess> {
  const child = spawn(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${out}`)), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(ready)) {
        clearTimeout(timer);
        child.stdout!.resume();
        resolve(child);
      }
    });
    child.stderr!.resume();
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${out}`)));
  });
}

describeWithTools(
  'Redis failover with Sentinel',
  [{ bin: 'redis-sentinel', install: 'apt-get install redis-sentinel' }],
  () => {
    beforeAll(async () => {
      [origin, media] = await Promise.all([startOrigin(), testMedia()]);
      primaryPort = await freePort();
      replicaPort = await freePort();
      sentinelPorts = [await freePort(), await freePort(), await freePort()];
      // Each server has its own folder: a replica's full sync writes an RDB file into it.
      const common = (name: string) => {
        fs.mkdirSync(path.join(dir, name));
        return ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', path.join(dir, name)];
      };
      primary = await spawnRedis(
        ['redis-server', '--port', String(primaryPort), ...common('primary')],
        'Ready to accept connections',
      );
      await spawnRedis(
        [
          'redis-server',
          '--port',
          String(replicaPort),
          ...common('replica'),
          '--replicaof',
          '127.0.0.1',
          String(primaryPort),
        ],
        'Ready to accept connections',
      );
      for (const port of sentinelPorts) {
        const conf = path.join(dir, `sentinel-${port}.conf`);
        fs.writeFileSync(
          conf,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${dir}`,
            `sentinel monitor ${NAME} 127.0.0.1 ${primaryPort} 2`,
            `sentinel down-after-milliseconds ${NAME} 1000`,
            `sentinel failover-timeout ${NAME} 5000`,
            `sentinel parallel-syncs ${NAME} 1`,
            '',
          ].join('\n'),
        );
        await spawnRedis(['redis-sentinel', conf], 'Sentinel ID');
      }
      // The replica must be in sync, and the sentinels must know it, before a failover can promote it.
      const replica = testRedisClient(`redis://127.0.0.1:${replicaPort}`);
      const sentinel = testRedisClient(`redis://127.0.0.1:${sentinelPorts[0]}`);
      for (let i = 0; ; i++) {
        const synced = (await replica.info('replication')).includes('master_link_status:up');
        const known = ((await sentinel.call('SENTINEL', 'REPLICAS', NAME)) as unknown[]).length > 0;
        if (synced && known) break;
        if (i > 150) throw new Error('the replica or the sentinels did not get ready');
        await new Promise((r) => setTimeout(r, 100));
      }
      replica.disconnect();
      sentinel.disconnect();

      const env = {
        REDIS_URL: '',
        REDIS_SENTINELS: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
        REDIS_SENTINEL_NAME: NAME,
        DATA_DIR: dir,
      };
      const config = testConfig(env);
      const redis = connectRedis(config);
      redis.on('error', () => {});
      await redisReady(redis);
      gw = await buildGateway({ env, redis, deps: { queuePrefix: 'bull' } });
      worker = await startWorker({
        config: { ...config, WORKER_CONCURRENCY: 2 },
        logger: createLogger({ name: 'w', level: 'silent' }),
        metricsPort: 0,
        lockDuration: 3000,
        stalledInterval: 1500,
      });
      server = gw.app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
    }, 60_000);

    afterAll(async () => {
      await worker?.stop();
      if (server) {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
      await gw?.close();
      await origin?.close();
      for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const post = (pathname: string, body: object) =>
      fetch(`${base}${pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    /** A remux job for a distinct URL (so requests are not de-duplicated); undefined when refused. */
    async function submit(n: number): Promise<{ status: number; id?: string }> {
      const url = origin.url(`/media/clip.mp4?n=${n}`);
      const extracted = await post('/api/v1/extract', { url });
      await extracted.arrayBuffer();
      if (extracted.status !== 200) return { status: extracted.status };
      const res = await post('/api/v1/download', { url, format: 'mkv' });
      const body = (await res.json()) as { data?: { job_id: string } };
      return { status: res.status, id: body.data?.job_id };
    }

    test('after the primary is SIGKILLed, the gateway answers 503 only until the sentinels promote the replica, and every accepted job completes', async () => {
      const accepted: string[] = [];
      const statuses: { at: number; status: number }[] = [];
      let n = 0;
      let running = true;
      // The load: a new job every 100 ms, before, during and after the failover.
      const load = (async () => {
        while (running) {
          const at = Date.now();
          const r = await submit(n++).catch(() => ({ status: 0, id: undefined }));
          statuses.push({ at, status: r.status });
          if (r.id) accepted.push(r.id);
          await new Promise((res) => setTimeout(res, 100));
        }
      })();
      await new Promise((r) => setTimeout(r, 2500));
      const killedAt = Date.now();
      primary.kill('SIGKILL');
      // Until the gateway answers again through the new primary, and a little beyond.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const recent = statuses.filter((s) => s.at > killedAt + 1000);
        if (recent.some((s) => s.status === 202) && statuses.at(-1)?.status === 202) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 2500));
      running = false;
      await load;

      const failures = statuses.filter((s) => s.status !== 202);
      const unavailableSeconds = failures.length ? (failures.at(-1)!.at - failures[0].at) / 1000 : 0;
      // Every refusal was a clean 503 (service_unavailable), never a hang or another 5xx.
      expect(new Set(failures.map((s) => s.status))).toEqual(new Set(failures.length ? [503] : []));
      expect(unavailableSeconds).toBeLessThan(15);
      expect(statuses.filter((s) => s.at > killedAt + 1000 && s.status === 202).length).toBeGreaterThan(0);

      // Every accepted job, before or after the failover, completes (polled through the gateway).
      const pending = new Set(accepted);
      const until = Date.now() + 30_000;
      while (pending.size && Date.now() < until) {
        for (const id of [...pending]) {
          const res = await fetch(`${base}/api/v1/jobs/${id}`);
          const view = (await res.json()) as { data?: { status: string } };
          if (view.data?.status === 'completed') pending.delete(id);
          else if (view.data?.status === 'failed') throw new Error(`job ${id} failed`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      process.stdout.write(
        `sentinel failover: ${accepted.length} jobs accepted, ${pending.size} lost, 503 for ${unavailableSeconds.toFixed(1)} s (${failures.length} of ${statuses.length} requests)\n`,
      );
      expect(pending.size).toBe(0);
      expect(accepted.length).toBeGreaterThanOrEqual(10);
    }, 90_000);
  },
);
