// The worker's ear for cancel and stop (contracts' job-signals.ts): one subscriber connection per
// process on one channel, fanned out to the runs of this process by job id. A run registers first
// and then reads the signal keys, so a signal sent before it registered is seen in the key and one
// sent after it is heard on the channel: none falls between the two. Messages for jobs this process
// does not run are ignored.
import type { RedisClient } from '@reelay/redis';
import {
  JOB_SIGNAL_CHANNEL,
  jobSignalKey,
  JobSignalMessageSchema,
  JobSignalSchema,
  type JobSignal,
} from '@reelay/contracts';
import type { Logger } from '@reelay/observability';

export type SignalHandler = (signal: JobSignal) => void;

export class JobSignalListener {
  private readonly handlers = new Map<string, Set<SignalHandler>>();
  private ready?: Promise<void>;

  /** `subscriber` is a connection of its own: in subscriber mode it can send no other command. */
  constructor(
    private readonly subscriber: RedisClient,
    private readonly commands: RedisClient,
    private readonly logger: Logger,
  ) {}

  /** Subscribes once; a failure is logged and the keys still catch signals at each job's start. */
  start(): Promise<void> {
    this.ready ??= (async () => {
      this.subscriber.on('message', (channel: string, text: string) => {
        if (channel === JOB_SIGNAL_CHANNEL) this.deliver(text);
      });
      await this.subscriber.subscribe(JOB_SIGNAL_CHANNEL);
    })().catch((err: unknown) =>
      this.logger.warn(
        { err: (err as Error).message },
        'job signals: cannot subscribe; signals reach jobs only when they start',
      ),
    );
    return this.ready;
  }

  private deliver(text: string): void {
    let parsed;
    try {
      parsed = JobSignalMessageSchema.safeParse(JSON.parse(text));
    } catch {
      return;
    }
    if (!parsed.success) return;
    for (const handler of this.handlers.get(parsed.data.id) ?? []) handler(parsed.data.signal);
  }

  /**
   * Listens for the job's signals, then reports those already recorded (a signal sent before this
   * call). The handler may be called twice for one signal (key and message); it must not mind.
   */
  async watch(id: string, handler: SignalHandler): Promise<() => void> {
    let set = this.handlers.get(id);
    if (!set) this.handlers.set(id, (set = new Set()));
    set.add(handler);
    const unwatch = () => {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(id) === set) this.handlers.delete(id);
    };
    for (const signal of await this.recorded(id)) handler(signal);
    return unwatch;
  }

  /** The signals recorded for a job (its keys), e.g. a cancel that came while it was queued. */
  async recorded(id: string): Promise<JobSignal[]> {
    const signals = JobSignalSchema.options;
    // One GET each, sent together: on a Redis Cluster the keys live in different slots (no MGET).
    const values = await Promise.all(signals.map((s) => this.commands.get(jobSignalKey(s, id))));
    return signals.filter((_, i) => values[i] !== null);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    await this.ready;
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
