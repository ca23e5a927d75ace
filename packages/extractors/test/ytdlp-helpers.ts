// For the yt-dlp bridge tests: whether the real yt-dlp is here, fake yt-dlp scripts, and a trap
// server that proves nothing reached a blocked address.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { locateYtdlp } from '../src/ytdlp-process.js';

/** The real yt-dlp, or undefined (then the tests that need it are skipped, except under CI). */
export async function realYtdlp(): Promise<string | undefined> {
  const { binary } = locateYtdlp(undefined, process.env.PATH ?? '');
  if (
    binary &&
    (await promisify(execFile)(binary, ['--version']).then(
      () => true,
      () => false,
    ))
  )
    return binary;
  if (process.env.CI) throw new Error('yt-dlp is required in CI (apt-get install yt-dlp)');
  process.stderr.write('yt-dlp is not installed: the tests that run the real yt-dlp are skipped\n');
  return undefined;
}

const fakeDirs: string[] = [];

/** A fake yt-dlp: a shell script in a folder of its own, which it can write notes into. */
export function fakeYtdlp(body: string): { binary: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-fake-ytdlp-'));
  fakeDirs.push(dir);
  const binary = path.join(dir, 'yt-dlp');
  // The child's environment is stripped, so the script finds its folder from its own path.
  fs.writeFileSync(binary, `#!/bin/sh\nDIR="$(dirname "$0")"\n${body}\n`, { mode: 0o755 });
  return { binary, dir };
}

/** Removes the fake scripts' folders. */
export function removeFakes(): void {
  for (const dir of fakeDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** A TCP server that only counts connections. */
export async function startTrap(host: string): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    trap.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const trap = {
    port: (server.address() as net.AddressInfo).port,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return trap;
}

/** Whether a process with this id still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}
