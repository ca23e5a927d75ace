// Redis' wire protocol (RESP), just enough for bench/redis-cost.mjs: a relay in front of redis-server
// that counts what one process sends (commands by name, client writes, bytes, connections), and a
// small client for INFO, SCAN and MEMORY USAGE that needs no driver.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';

/** BullMQ's scripts by SHA1 (what EVALSHA names), from the copy the worker uses: moveToActive, …. */
async function bullmqScripts(root) {
  const names = new Map();
  try {
    const dir = path.join(
      path.dirname(createRequire(path.join(root, 'apps/worker/package.json')).resolve('bullmq')),
      'scripts',
    );
    for (const file of fs.readdirSync(dir).filter((f) => /^[\w]+-\d+\.js$/.test(f))) {
      const mod = await import(path.join(dir, file));
      for (const script of Object.values(mod)) if (script?.content) names.set(sha1(script.content), script.name);
    }
  } catch {
    /* unnamed, then: the SHA prefix stays */
  }
  return names;
}

const sha1 = (text) => createHash('sha1').update(text).digest('hex');

/** A script's name: BullMQ's, or the commands it calls (reelay's own scripts carry no name). */
function scriptLabel(names, text) {
  const known = names.get(sha1(text));
  if (known) return known;
  const calls = [...new Set([...text.matchAll(/redis\.call\(\s*['"](\w+)['"]/g)].map((m) => m[1].toUpperCase()))];
  return `lua(${calls.join(' ')})`;
}

/**
 * Reads whole command arrays (`*N\r\n$len\r\n…`) off a client's byte stream, as they complete.
 * Returns a function to feed chunks; calls `onCommand(name, args)` per command.
 */
export function commandReader(onCommand) {
  let buf = Buffer.alloc(0);
  const parse = () => {
    if (buf[0] !== 0x2a) throw new Error(`not a RESP array: ${buf.subarray(0, 20)}`);
    let at = buf.indexOf('\r\n');
    if (at < 0) return false;
    const n = Number(buf.subarray(1, at));
    let pos = at + 2;
    const args = [];
    for (let i = 0; i < n; i++) {
      at = buf.indexOf('\r\n', pos);
      if (at < 0) return false;
      const len = Number(buf.subarray(pos + 1, at));
      if (buf.length < at + 2 + len + 2) return false;
      // Only the first two arguments matter to the counts (the name, a subcommand or script).
      if (i < 2) args.push(buf.subarray(at + 2, at + 2 + len).toString());
      pos = at + 2 + len + 2;
    }
    buf = buf.subarray(pos);
    onCommand(args[0].toLowerCase(), args.slice(1));
    return true;
  };
  return (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length && parse());
  };
}

/** A fresh tally of what one process sent. */
export const emptyTally = () => ({ connections: 0, writes: 0, commands: 0, byName: {}, bytesIn: 0, bytesOut: 0 });

/**
 * A TCP relay to redis-server on `redisPort` that tallies one process's traffic: `writes` are the
 * client's writes as they arrive (a pipeline or MULTI block is one; one per round trip otherwise),
 * `bytesIn` what it sent, `bytesOut` what Redis answered.
 */
export async function startRelay(redisPort, root) {
  const tally = emptyTally();
  const scripts = await bullmqScripts(root);
  const sockets = new Set();
  const server = net.createServer((client) => {
    tally.connections++;
    const upstream = net.connect(redisPort, '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    const feed = commandReader((name, args) => {
      tally.commands++;
      // A script runs as EVAL once (when Redis lacks it), then as EVALSHA: both are named by it.
      if (name === 'eval' && !scripts.has(sha1(args[0]))) scripts.set(sha1(args[0]), scriptLabel(scripts, args[0]));
      const label =
        name === 'evalsha'
          ? `script ${scripts.get(args[0]) ?? args[0].slice(0, 8)}`
          : name === 'eval'
            ? `script ${scripts.get(sha1(args[0]))}`
            : name;
      tally.byName[label] = (tally.byName[label] ?? 0) + 1;
    });
    client.on('data', (chunk) => {
      tally.writes++;
      tally.bytesIn += chunk.length;
      feed(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      tally.bytesOut += chunk.length;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${server.address().port}`,
    tally,
    open: () => sockets.size / 2,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Reads one RESP reply from the start of `buf`: [value, bytes used], or undefined if incomplete. */
function readReply(buf, pos = 0) {
  const at = buf.indexOf('\r\n', pos);
  if (at < 0) return undefined;
  const head = buf.subarray(pos + 1, at).toString();
  const next = at + 2;
  switch (buf[pos]) {
    case 0x2b: // +
      return [head, next];
    case 0x2d: // -
      return [new Error(head), next];
    case 0x3a: // :
      return [Number(head), next];
    case 0x24: {
      // $
      const len = Number(head);
      if (len < 0) return [null, next];
      if (buf.length < next + len + 2) return undefined;
      return [buf.subarray(next, next + len).toString(), next + len + 2];
    }
    case 0x2a: {
      // *
      const n = Number(head);
      const items = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const r = readReply(buf, p);
        if (!r) return undefined;
        items.push(r[0]);
        p = r[1];
      }
      return [items, p];
    }
    default:
      throw new Error(`unexpected RESP reply: ${buf.subarray(pos, pos + 20)}`);
  }
}

/** A one-command-at-a-time client (the bench's own reads); `sent` counts its commands by name. */
export async function connectClient(port) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const sent = {};
  let buf = Buffer.alloc(0);
  let waiting;
  socket.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    const r = readReply(buf);
    if (!r || !waiting) return;
    buf = buf.subarray(r[1]);
    const w = waiting;
    waiting = undefined;
    if (r[0] instanceof Error) w.reject(r[0]);
    else w.resolve(r[0]);
  });
  return {
    sent,
    call(...args) {
      const name = String(args[0]).toLowerCase();
      sent[name] = (sent[name] ?? 0) + 1;
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`).join('')}`);
      });
    },
    close: () => socket.destroy(),
  };
}

/** INFO's `key:value` lines as an object (numbers where they are numbers). */
export function parseInfo(text) {
  const out = {};
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i <= 0 || line.startsWith('#')) continue;
    const v = line.slice(i + 1);
    out[line.slice(0, i)] = /^-?[\d.]+$/.test(v) ? Number(v) : v;
  }
  return out;
}

/** `cmdstat_<name>:calls=N,usec=…` lines → { name: calls }. */
export function commandCalls(info) {
  const out = {};
  for (const [k, v] of Object.entries(info)) {
    if (!k.startsWith('cmdstat_')) continue;
    out[k.slice(8)] = Number(/calls=(\d+)/.exec(v)[1]);
  }
  return out;
}
