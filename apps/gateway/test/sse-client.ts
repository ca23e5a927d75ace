// A minimal server-sent events reader for tests: one plain HTTP GET on 127.0.0.1 (no EventSource, so
// the test sees the raw lines: ids, comments, retry, and exactly when the server ends the stream).
import http from 'node:http';

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  comments: number;
  retry?: number;
  /** The raw body so far. */
  text: string;
  /** Resolves when the server ends the response (or rejects when the connection fails). */
  ended: Promise<void>;
  /** Resolves once `n` events have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

export function openEvents(base: string, path: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${base}${path}`,
      { headers: { accept: 'text/event-stream', 'accept-encoding': 'gzip, br', ...headers }, agent: false },
      (res) => {
        const stream: SseStream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          events: [],
          comments: 0,
          text: '',
          ended: new Promise((done, fail) => {
            res.on('end', done);
            res.on('error', fail);
            res.on('aborted', () => fail(new Error('aborted')));
          }),
          waitFor: (n, timeoutMs = 20_000) =>
            new Promise((ok, fail) => {
              const timer = setTimeout(
                () =>
                  fail(new Error(`only ${stream.events.length} of ${n} events after ${timeoutMs} ms:\n${stream.text}`)),
                timeoutMs,
              );
              const check = () => {
                if (stream.events.length < n) return;
                clearTimeout(timer);
                res.off('data', onData);
                ok(stream.events.slice(0, n));
              };
              const onData = () => setImmediate(check);
              res.on('data', onData);
              check();
            }),
          close: () => req.destroy(),
        };
        stream.ended.catch(() => undefined);
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          stream.text += chunk;
          pending += chunk;
          let end: number;
          while ((end = pending.indexOf('\n\n')) >= 0) {
            const block = pending.slice(0, end);
            pending = pending.slice(end + 2);
            const event: SseEvent = { data: '' };
            let isEvent = false;
            for (const line of block.split('\n')) {
              const [field, ...rest] = line.split(':');
              const value = rest.join(':').replace(/^ /, '');
              if (field === '') stream.comments++;
              else if (field === 'retry') stream.retry = Number(value);
              else if (field === 'id' || field === 'event' || field === 'data') {
                isEvent = true;
                event[field] = field === 'data' && event.data ? `${event.data}\n${value}` : value;
              }
            }
            if (isEvent) stream.events.push(event);
          }
        });
        resolve(stream);
      },
    );
    req.on('error', reject);
  });
}
