// One subscriber connection per gateway for the extract cache's single flight: requests waiting for
// another replica's fetch of a URL join that URL's channel; the connection subscribes while anyone
// here waits on it and unsubscribes when the last one leaves, so a replica receives only the
// messages of fetches it waits for. Opened on the first wait, not at start.
import type { RedisClient } from '@reelay/redis';
import type { ErrorCode } from '@reelay/contracts';
import type { Extraction } from '@reelay/extractors';
import type { Logger } from '@reelay/observability';
import { duplicateRedis } from '@reelay/redis';

/** What a holder announces: the stored entry, the error it met, or that it gave up. */
export type FlightMessage =
  | { stored_at: number; extraction: Extraction }
  | { error: { code: ErrorCode; message: string; headers?: Record<string, string> } }
  | { abandoned: true };

export interface Flight {
  /** Resolves once subscribed (or once subscribing failed: the waiter then only re-checks). */
  ready: Promise<void>;
  /** The next message, or undefined after `ms` or when `signal` aborts. */
  next(ms: number, signal?: AbortSignal): Promise<FlightMessage | undefined>;
  leave(): void;
}

interface Member {
  queue: FlightMessage[];
  wake?: () => void;
}

export class FlightListener {
  private subscriber?: RedisClient;
  private readonly channels = new Map<string, { members: Set<Member>; ready: Promise<void> }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly logger: Logger,
  ) {}

  join(channel: string): Flight {
    const member: Member = { queue: [] };
    const sub = this.connection();
    let joined = this.channels.get(channel);
    if (!joined) {
      const ready = sub.subscribe(channel).then(
        () => undefined,
        (err: Error) => this.logger.warn({ err: err.message }, 'extract cache: cannot subscribe; waiting by polling'),
      );
      this.channels.set(channel, (joined = { members: new Set(), ready }));
    }
    const { members } = joined;
    members.add(member);
    return {
      ready: joined.ready,
      next: (ms, signal) => {
        const queued = member.queue.shift();
        if (queued || signal?.aborted) return Promise.resolve(queued);
        return new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            member.wake = undefined;
            resolve(member.queue.shift());
          };
          const timer = setTimeout(done, ms);
          signal?.addEventListener('abort', done, { once: true });
          member.wake = done;
        });
      },
      leave: () => {
        member.wake?.();
        members.delete(member);
        if (members.size === 0 && this.channels.get(channel) === joined) {
          this.channels.delete(channel);
          sub.unsubscribe(channel).catch(() => undefined);
        }
      },
    };
  }

  private connection(): RedisClient {
    if (this.subscriber) return this.subscriber;
    // Its own connection (a subscribed client can do nothing else); commands queue while it connects.
    const sub = duplicateRedis(this.redis, { enableOfflineQueue: true });
    sub.on('error', (err: Error) =>
      this.logger.warn({ err: err.message }, 'extract cache subscriber: redis connection problem'),
    );
    sub.on('message', (channel: string, text: string) => {
      const members = this.channels.get(channel)?.members;
      if (!members) return;
      let message: FlightMessage;
      try {
        message = JSON.parse(text) as FlightMessage;
      } catch {
        return;
      }
      for (const m of members) {
        m.queue.push(message);
        m.wake?.();
      }
    });
    return (this.subscriber = sub);
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (sub) await sub.quit().catch(() => sub.disconnect());
  }
}
