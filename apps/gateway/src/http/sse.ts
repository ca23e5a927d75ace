// A server-sent event stream on one response (WHATWG HTML, "Server-sent events"): the headers that
// keep proxies from buffering or compressing it, `retry:` once, a comment line as a heartbeat, and a
// bound on what may wait unsent: a client that stops reading is dropped, not buffered without end.
import type { Response } from 'express';

export interface EventStreamOptions {
  /** Most time between two writes; a comment line fills the silence (proxies close idle streams). */
  heartbeatMs: number;
  /** Most bytes that may wait unsent for this client before it is dropped. */
  maxBufferedBytes: number;
  /** What an EventSource waits before reconnecting after the connection drops. */
  retryMs: number;
}

export class EventStream {
  private heartbeat?: NodeJS.Timeout;
  private closed = false;
  /** Largest unsent backlog seen, in bytes (tests check the bound). */
  peakBuffered = 0;

  constructor(
    private readonly res: Response,
    private readonly options: EventStreamOptions,
    private readonly onClose: (reason: 'client' | 'slow' | 'ended') => void,
  ) {
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    // no-cache and no-transform: no cache or proxy may store or re-encode (compress) the stream.
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no'); // nginx: pass each event on at once
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    this.write(`retry: ${options.retryMs}\n\n`);
    this.heartbeat = setInterval(() => this.write(':\n\n'), options.heartbeatMs);
    res.on('close', () => this.finish('client'));
  }

  get open(): boolean {
    return !this.closed;
  }

  send(id: number, event: string, data: unknown): void {
    this.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the stream after what was written (the terminal event). */
  end(): void {
    if (this.closed) return;
    this.finish('ended');
    this.res.end();
  }

  private write(text: string): void {
    if (this.closed) return;
    this.heartbeat?.refresh(); // any write proves the stream alive; the comment is only for silence
    this.res.write(text);
    const buffered = this.res.writableLength;
    this.peakBuffered = Math.max(this.peakBuffered, buffered);
    if (buffered > this.options.maxBufferedBytes) {
      this.finish('slow');
      this.res.destroy();
    }
  }

  private finish(reason: 'client' | 'slow' | 'ended'): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.onClose(reason);
  }
}
