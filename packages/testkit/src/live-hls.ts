// Test helpers for recordings: ffmpeg making a REAL live HLS stream in real time (1 s segments,
// a sliding window or an EVENT playlist) into a folder, and a local origin serving folders by
// prefix, with a hook to fail chosen requests and a count of every request.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface LiveStream {
  dir: string;
  process: ChildProcess;
  /** Waits until the playlist lists at least n segments. */
  listed(n: number, timeoutMs?: number): Promise<void>;
  /** The media sequence numbers the playlist lists now (empty before the first). */
  window(): number[];
  /** Ends the broadcast (ffmpeg writes EXT-X-ENDLIST as it exits). */
  end(): Promise<void>;
  kill(): void;
}

/** ffmpeg -re producing live HLS: `seconds` limits it (EVENT playlists end by themselves). */
export function startLiveHls(options: { seconds?: number; event?: boolean; listSize?: number } = {}): LiveStream {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-live-'));
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-re',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x120:rate=10',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=22050',
  ];
  if (options.seconds) args.push('-t', String(options.seconds));
  args.push(
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-g',
    '10',
    '-keyint_min',
    '10',
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '32k',
    '-f',
    'hls',
    '-hls_time',
    '1',
  );
  if (options.event) args.push('-hls_playlist_type', 'event', '-hls_list_size', '0');
  else args.push('-hls_list_size', String(options.listSize ?? 5), '-hls_flags', 'delete_segments');
  args.push('-hls_segment_filename', path.join(dir, 'seg%d.ts'), path.join(dir, 'index.m3u8'));
  const child = spawn('ffmpeg', args, { stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    dir,
    process: child,
    async listed(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = fs.existsSync(path.join(dir, 'index.m3u8'))
          ? fs.readFileSync(path.join(dir, 'index.m3u8'), 'utf8')
          : '';
        if ((text.match(/#EXTINF/g) ?? []).length >= n) return;
        if (Date.now() > deadline)
          throw new Error(`the live stream listed fewer than ${n} segments in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    window() {
      const file = path.join(dir, 'index.m3u8');
      const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
      return [...text.matchAll(/^seg(\d+)\.ts$/gm)].map((m) => Number(m[1]));
    },
    async end() {
      child.stdin?.end('q');
      await exited;
    },
    kill() {
      child.kill('SIGKILL');
    },
  };
}

export interface FolderOrigin {
  base: string;
  url(p: string): string;
  /** Requests by path. */
  hits: Map<string, number>;
  /** Answer this status instead of the file when it returns a number. */
  fail?: (p: string) => number | undefined;
  /** Serve this text instead of a file (a handcrafted playlist). */
  texts: Map<string, () => string>;
  mount(prefix: string, dir: string): void;
  close(): Promise<void>;
}

function contentType(p: string): string {
  if (p.endsWith('.m3u8')) return 'application/vnd.apple.mpegurl';
  if (p.endsWith('.mpd')) return 'application/dash+xml';
  return p.endsWith('.m4s') || p.endsWith('.mp4') ? 'video/mp4' : 'video/mp2t';
}

export async function startFolderOrigin(): Promise<FolderOrigin> {
  const mounts = new Map<string, string>();
  const sockets = new Set<net.Socket>();
  const origin = { hits: new Map<string, number>(), texts: new Map<string, () => string>() } as FolderOrigin;
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    origin.hits.set(p, (origin.hits.get(p) ?? 0) + 1);
    const status = origin.fail?.(p);
    if (status) return void res.writeHead(status).end();
    const text = origin.texts.get(p);
    if (text) return void res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }).end(text());
    const [, prefix, ...rest] = p.split('/');
    const dir = mounts.get(prefix);
    const file = dir && path.join(dir, ...rest);
    if (!file || !file.startsWith(dir) || !fs.existsSync(file)) return void res.writeHead(404).end();
    const body = fs.readFileSync(file);
    res.writeHead(200, { 'content-type': contentType(p), 'content-length': body.length }).end(body);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  origin.base = `http://127.0.0.1:${port}`;
  origin.url = (p) => `${origin.base}${p}`;
  origin.mount = (prefix, dir) => mounts.set(prefix, dir);
  origin.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return origin;
}
