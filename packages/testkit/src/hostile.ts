// Hostile inputs made at test time, and the peak memory of what they make run, sampled from /proc while it runs: the child
// processes whose command line mentions a marker (an origin's address, a job's folder), each one's
// VmHWM (summed: ffmpeg and ffprobe may run side by side), and this test process's own RSS (where the
// worker's or the gateway's proxy runs). For assertions with the bound in them, and for the figures.
import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import zlib from 'node:zlib';

export interface Peaks {
  /** Sum of the VmHWM of every matching process seen, MiB. */
  childrenMb: number;
  /**
   * Sum of each matching process's highest file-backed and shared resident memory (RssFile +
   * RssShmem: its code and libraries), MiB. The memory bound is on data (RLIMIT_DATA), so a process
   * at its bound may show up to this much more resident: `childrenMb - childrenFileMb` is what the
   * bound holds.
   */
  childrenFileMb: number;
  /** Highest resident set of this process, MiB. */
  selfMb: number;
  /** How far this process grew past its resident set at the start, MiB (what earlier tests left aside). */
  selfGrowthMb: number;
  /** How many matching processes were seen. */
  children: number;
}

/** Starts sampling every 50 ms; stop() ends it and returns the peaks. */
export function samplePeaks(marker: string): { stop(): Peaks } {
  const hwm = new Map<number, number>();
  const file = new Map<number, number>();
  const start = process.memoryUsage().rss;
  let self = start;
  const sample = () => {
    self = Math.max(self, process.memoryUsage().rss);
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        if (!fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) continue;
        const status = fs.readFileSync(`/proc/${entry}/status`, 'utf8');
        const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
        const pid = Number(entry);
        hwm.set(pid, Math.max(hwm.get(pid) ?? 0, kb('VmHWM')));
        file.set(pid, Math.max(file.get(pid) ?? 0, kb('RssFile') + kb('RssShmem')));
      } catch {
        // the process ended while we looked
      }
    }
  };
  const timer = setInterval(sample, 50);
  return {
    stop() {
      sample();
      clearInterval(timer);
      const sum = (m: Map<number, number>) => [...m.values()].reduce((a, b) => a + b, 0);
      return {
        childrenMb: Math.round(sum(hwm) / 1024),
        childrenFileMb: Math.round(sum(file) / 1024),
        selfMb: Math.round(self / 1024 / 1024),
        selfGrowthMb: Math.round((self - start) / 1024 / 1024),
        children: hwm.size,
      };
    },
  };
}

/**
 * One gzip member: `head`, then `bytes` copies of `fill`. A GiB of one byte compresses to about 1 MB
 * (level 9, ~2 s): a bomb, made as a stream so the test never holds the inflated form.
 */
export async function gzipBomb(head: Buffer, bytes: number, fill = 0): Promise<Buffer> {
  const gzip = zlib.createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => gzip.once('end', resolve));
  gzip.write(head);
  const block = Buffer.alloc(1024 * 1024, fill);
  for (let left = bytes; left > 0; left -= block.length) {
    if (!gzip.write(left >= block.length ? block : block.subarray(0, left)))
      await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await ended;
  return Buffer.concat(out);
}

/**
 * An endless chunked body: `head`, then 64 KiB chunks for as long as the reader reads (written with
 * backpressure, so the origin itself stays small), until the response is destroyed.
 */
export function endlessBody(res: ServerResponse, contentType: string, head = ''): void {
  res.writeHead(200, { 'content-type': contentType });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  if (head) res.write(head);
  pump();
}
