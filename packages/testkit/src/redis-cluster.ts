// A private Redis Cluster for tests: Debian's redis-server with --cluster-enabled on 127.0.0.1, joined
// by `redis-cli --cluster create` (3 primaries and, by default, one replica each), in a temp folder
// that goes with it. Each node also listens on its port + 10000 (the cluster bus), so both are free.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ClusterNodeHandle {
  port: number;
  process: ChildProcess;
}

export interface RedisClusterHandle {
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,…`: every node as a seed. */
  url: string;
  nodes: ClusterNodeHandle[];
  /** Runs redis-cli against one node and returns its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** The ports of the nodes that are primaries now, and of the replicas. */
  roles(): Promise<{ primaries: number[]; replicas: number[] }>;
  /** Promotes a replica with CLUSTER FAILOVER (its primary steps down) and waits until it serves. */
  failover(replicaPort: number): Promise<void>;
  stop(): Promise<void>;
}

/** Whether `port` can be bound on 127.0.0.1 right now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port whose cluster bus port (+10000) is free too, below the ephemeral range so neither is taken soon. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port pair for a cluster node');
}

function startNode(port: number, dir: string): Promise<ClusterNodeHandle> {
  const nodeDir = path.join(dir, String(port));
  fs.mkdirSync(nodeDir);
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    '2000',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    nodeDir,
    '--maxmemory-policy',
    'noeviction',
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`redis-server (cluster node ${port}) did not start: ${out}`)),
      10_000,
    );
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-server (${err.message}); install it, e.g. apt-get install redis-server`));
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ port, process: child });
      }
    });
    child.stderr!.resume();
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server (cluster node ${port}) exited with ${code}: ${out}`));
    });
  });
}

/** Polls `check` every 100 ms until it holds, for at most `ms`: the cluster announces no events to wait on. */
async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRedisCluster(
  options: { primaries?: number; replicas?: number } = {},
): Promise<RedisClusterHandle> {
  const primaries = options.primaries ?? 3;
  const replicas = options.replicas ?? 1;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-redis-cluster-'));
  const taken = new Set<number>();
  const nodes: ClusterNodeHandle[] = [];
  // A test process that ends without stop() (a failing hook, --forceExit) takes its nodes with it.
  const killAll = () => nodes.forEach((n) => n.process.exitCode === null && n.process.kill('SIGKILL'));
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    await Promise.all(
      nodes.map(
        (n) =>
          new Promise<void>((resolve) => {
            if (n.process.exitCode !== null || n.process.signalCode !== null) return resolve();
            n.process.once('exit', () => resolve());
            n.process.kill('SIGKILL');
          }),
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const cli = async (port: number, ...args: string[]) =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })).stdout;
  const roles = async () => {
    const out: { primaries: number[]; replicas: number[] } = { primaries: [], replicas: [] };
    for (const n of nodes) {
      if (n.process.exitCode !== null) continue;
      const role = (await cli(n.port, 'ROLE')).split('\n')[0].trim();
      (role === 'master' ? out.primaries : out.replicas).push(n.port);
    }
    return out;
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < primaries * (1 + replicas); i++) ports.push(await freeClusterPort(taken));
    nodes.push(...(await Promise.all(ports.map((port) => startNode(port, dir)))));
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    // Every node must see every slot served and, for a failover to be possible, every replica in sync.
    await until('every node reports cluster_state:ok', 20_000, async () =>
      (await Promise.all(ports.map((p) => cli(p, 'CLUSTER', 'INFO')))).every((info) =>
        info.includes('cluster_state:ok'),
      ),
    );
    await until('every replica is in sync', 20_000, async () => {
      const { replicas: rs } = await roles();
      const infos = await Promise.all(rs.map((p) => cli(p, 'INFO', 'replication')));
      return rs.length === primaries * replicas && infos.every((i) => i.includes('master_link_status:up'));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    nodes,
    cli,
    roles,
    async failover(replicaPort: number) {
      const reply = (await cli(replicaPort, 'CLUSTER', 'FAILOVER')).trim();
      if (reply !== 'OK') throw new Error(`CLUSTER FAILOVER answered ${reply}`);
      await until(`node ${replicaPort} becomes a primary`, 20_000, async () =>
        (await cli(replicaPort, 'ROLE')).startsWith('master'),
      );
      await until('every node reports cluster_state:ok after the failover', 20_000, async () =>
        (await Promise.all(nodes.map((n) => cli(n.port, 'CLUSTER', 'INFO')))).every((info) =>
          info.includes('cluster_state:ok'),
        ),
      );
    },
    stop,
  };
}
