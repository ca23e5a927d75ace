// Follows a job through GET /api/v1/jobs/{id}/events (server-sent events, parsed by
// eventsource-parser) until its terminal state. A dropped stream is reopened with Last-Event-ID, so
// only later states come; a 204 then means the job had already ended. A stream that goes silent is
// dropped too: the server writes at least a comment line every 15 s, so silence past
// REELAY_EVENT_SILENCE_SECONDS (default 45, three of those) is a connection that died without a word
// (a proxy or NAT that forgot it, a laptop that slept), and waiting on it would wait for ever.
import { setTimeout as sleep } from 'node:timers/promises';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { TERMINAL, type Api, type JobView } from './api.js';
import { CliError } from './errors.js';

/** Connections in a row that bring no event before the CLI gives up. */
const RECONNECTS = 5;
const DEFAULT_SILENCE_SECONDS = 45;

/** How long a stream may stay silent (no event, no comment) before it is reopened. */
export function silenceMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.REELAY_EVENT_SILENCE_SECONDS);
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_SILENCE_SECONDS) * 1000;
}

/** `until`: stop following (and answer that state) as soon as it says so, terminal or not. */
export async function followJob(
  api: Api,
  id: string,
  onJob: (job: JobView) => void,
  until?: (job: JobView) => boolean,
): Promise<JobView> {
  let lastEventId: string | undefined;
  let last: JobView | undefined;
  const silence = silenceMs();
  for (let attempt = 0; ; attempt += 1) {
    // Silent for too long, from the request on: the connection is given up and reopened below.
    const quiet = new AbortController();
    const timer = setTimeout(() => quiet.abort(), silence);
    try {
      const res = await api.request(`/api/v1/jobs/${encodeURIComponent(id)}/events`, {
        headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        signal: quiet.signal,
      });
      if (res.status === 204) return last ?? (await api.job(id));
      if (!res.ok) return await api.fail(res);
      const heard = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          timer.refresh(); // anything at all, a heartbeat comment too, proves the connection alive
          out.enqueue(chunk);
        },
      });
      const events = res
        .body!.pipeThrough(heard)
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream());
      for await (const event of events) {
        if (event.event !== 'job') continue;
        attempt = 0; // this connection worked: the count is of connections in a row that did not
        lastEventId = event.id ?? lastEventId;
        last = JSON.parse(event.data) as JobView;
        if (until?.(last)) return last;
        onJob(last);
        if (TERMINAL.has(last.status)) return last;
      }
    } catch (err) {
      // The server's own error answer, or Ctrl-C: for the caller. Anything else is a cut or silent
      // connection: reopen below.
      if (api.signal.aborted || err instanceof CliError) throw err;
    } finally {
      clearTimeout(timer);
      quiet.abort(); // a stream left behind (by a return above) is closed, not kept open
    }
    if (attempt >= RECONNECTS)
      throw new CliError(
        `the server kept closing the event stream of job ${id}.`,
        `See where it stands with \`reelay job ${id}\`.`,
      );
    await sleep(500 * (attempt + 1), undefined, { signal: api.signal });
  }
}
