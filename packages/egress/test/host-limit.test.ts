import { describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { HostLimiter } from '../src/host-limit.js';

const limits = { fresh: 2, held: 1, queueTimeoutMs: 10_000, stallAfterMs: 60_000 };

describe('per-host limiter', () => {
  test('a host gets its fresh slots at once and further requests wait in order for a slot to free', async () => {
    const hosts = new HostLimiter(limits);
    const a = await hosts.acquire('h:80');
    await hosts.acquire('h:80');
    const order: string[] = [];
    const third = hosts.acquire('h:80').then((slot) => (order.push('third'), slot));
    const fourth = hosts.acquire('h:80').then((slot) => (order.push('fourth'), slot));
    expect(hosts.usage('h:80')).toEqual({ fresh: 2, held: 0, queued: 2 });
    a.release();
    a.release(); // twice is harmless: frees one slot only
    await third;
    expect(order).toEqual(['third']);
    expect(hosts.usage('h:80')).toEqual({ fresh: 2, held: 0, queued: 1 });
    (await third).release();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  test('another host is never held up by a busy one', async () => {
    const hosts = new HostLimiter(limits);
    await hosts.acquire('busy:80');
    await hosts.acquire('busy:80');
    void hosts.acquire('busy:80').catch(() => undefined);
    await expect(hosts.acquire('calm:80')).resolves.toBeDefined();
  });

  test('an exchange that has its headers moves to the held lane and frees a fresh slot, while the held lane has room', async () => {
    const hosts = new HostLimiter(limits);
    const a = await hosts.acquire('h:80');
    const b = await hosts.acquire('h:80');
    const waiting = hosts.acquire('h:80');
    a.hold();
    const c = await waiting;
    expect(hosts.usage('h:80')).toEqual({ fresh: 2, held: 1, queued: 0 });
    b.hold(); // held lane full: b keeps its fresh slot
    expect(hosts.usage('h:80')).toEqual({ fresh: 2, held: 1, queued: 0 });
    a.release();
    b.release();
    c.release();
    expect(hosts.usage('h:80')).toEqual({ fresh: 0, held: 0, queued: 0 });
  });

  test('a request that waits longer than the queue timeout fails with upstream_timeout naming the host', async () => {
    const hosts = new HostLimiter({ ...limits, fresh: 1, queueTimeoutMs: 30 });
    await hosts.acquire('slow.example:443');
    const err = await hosts.acquire('slow.example:443').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReelayError);
    expect((err as ReelayError).code).toBe('upstream_timeout');
    expect((err as ReelayError).message).toContain('slow.example:443');
    expect(hosts.usage('slow.example:443').queued).toBe(0);
  });

  test('a queued request whose caller gives up leaves the queue', async () => {
    const hosts = new HostLimiter({ ...limits, fresh: 1 });
    await hosts.acquire('h:80');
    const controller = new AbortController();
    const waiting = hosts.acquire('h:80', controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow();
    expect(hosts.usage('h:80').queued).toBe(0);
  });

  test('a stalled exchange moves to the held lane by itself after stallAfterMs', async () => {
    const hosts = new HostLimiter({ ...limits, stallAfterMs: 20 });
    await hosts.acquire('h:80');
    await new Promise((r) => setTimeout(r, 60));
    expect(hosts.usage('h:80')).toEqual({ fresh: 0, held: 1, queued: 0 });
  });

  test('an exchange that found the held lane full moves there once a held slot frees, so the fresh lane does not stay full', async () => {
    const hosts = new HostLimiter(limits);
    const a = await hosts.acquire('h:80');
    const b = await hosts.acquire('h:80');
    a.hold();
    b.hold(); // headers arrived, but the held lane (1) is full: b stays fresh for now
    expect(hosts.usage('h:80')).toEqual({ fresh: 1, held: 1, queued: 0 });
    a.release();
    expect(hosts.usage('h:80')).toEqual({ fresh: 0, held: 1, queued: 0 });
    const c = await hosts.acquire('h:80');
    const d = await hosts.acquire('h:80'); // both fresh slots are free again
    expect(hosts.usage('h:80')).toEqual({ fresh: 2, held: 1, queued: 0 });
    for (const slot of [b, c, d]) slot.release();
    expect(hosts.usage('h:80')).toEqual({ fresh: 0, held: 0, queued: 0 });
  });
});
