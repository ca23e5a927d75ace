// A realistic origin for the job benchmarks, run in its own process so its pacing does not share an
// event loop with what it measures: every file under a folder, with a delay before each response
// (the round trip a CDN is away), a throughput limit per connection (what one TCP stream gets from
// it), single byte ranges, keep-alive and no limit on concurrent connections. Loopback alone answers
// in microseconds at gigabytes per second, where fetching segments one by one costs nothing: such an
// origin hides exactly what parallel fetching is for.
// Usage: node bench/slow-origin.mjs <dir> [rttMs=40] [bytesPerSecond=2000000]; prints its port.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const root = path.resolve(process.argv[2] ?? '.');
const rttMs = Number(process.argv[3] ?? 40);
const bytesPerSecond = Number(process.argv[4] ?? 2_000_000);
/** Small enough that a connection's rate is smooth at 2 MB/s (one chunk every 8 ms). */
const CHUNK = 16 * 1024;

const TYPES = {
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.ts': 'video/mp2t',
  '.mp4': 'video/mp4',
  '.m4a': 'audio/mp4',
  '.html': 'text/html; charset=utf-8',
};

/**
 * Each connection's budget outlives its requests (keep-alive): a second request on the same socket
 * does not start with a fresh burst. `next` is when the connection may send its next chunk.
 */
const budgets = new WeakMap();

function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

async function send(req, res, fd, start, end) {
  const socket = req.socket;
  const budget = budgets.get(socket) ?? { next: 0 };
  budgets.set(socket, budget);
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = start;
  while (pos <= end && !res.destroyed) {
    const now = performance.now();
    if (budget.next > now) await delay(budget.next - now);
    const n = fs.readSync(fd, buf, 0, Math.min(CHUNK, end - pos + 1), pos);
    if (n <= 0) break;
    pos += n;
    budget.next = Math.max(budget.next, performance.now()) + (n / bytesPerSecond) * 1000;
    if (!res.write(Buffer.from(buf.subarray(0, n)))) await drained(res);
  }
  res.end();
}

const server = http.createServer(async (req, res) => {
  await delay(rttMs);
  const url = new URL(req.url ?? '/', 'http://origin');
  const file = path.join(root, path.normalize(decodeURIComponent(url.pathname)));
  if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile())
    return void res.writeHead(404).end();
  const size = fs.statSync(file).size;
  const headers = { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'accept-ranges': 'bytes' };
  let start = 0;
  let end = size - 1;
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  if (range && (range[1] || range[2])) {
    start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
    end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
    if (start >= size || start > end) return void res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
    res.writeHead(206, {
      ...headers,
      'content-length': end - start + 1,
      'content-range': `bytes ${start}-${end}/${size}`,
    });
  } else {
    res.writeHead(200, { ...headers, 'content-length': size });
  }
  if (req.method === 'HEAD') return void res.end();
  const fd = fs.openSync(file, 'r');
  try {
    await send(req, res, fd, start, end);
  } catch {
    res.destroy();
  } finally {
    fs.closeSync(fd);
  }
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.maxRequestsPerSocket = 0;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
