// A private redis-server for tests and `pnpm start`: a free port, no persistence unless a dir is
// given, stopped with the process that started it.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export interface RedisHandle {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startRedis(
  options: { dir?: string; appendOnly?: boolean; binary?: string; detached?: boolean; port?: number } = {},
): Promise<RedisHandle> {
  // A given port: a Redis back where a stopped one was, as after an outage.
  const port = options.port ?? (await freePort());
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    options.appendOnly ? 'yes' : 'no',
    '--maxmemory-policy',
    'noeviction',
  ];
  if (options.dir) args.push('--dir', options.dir);
  // detached: its own process group, so a terminal's Ctrl-C reaches the apps first and Redis is
  // stopped last, after they have finished with it.
  const child = spawn(options.binary ?? 'redis-server', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-server (${err.message}); install it, e.g. apt-get install redis-server`));
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${out}`));
    });
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
