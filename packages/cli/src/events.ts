// Follows a job through GET /api/v1/jobs/{id}/events (server-sent events, parsed by
// eventsource-parser) until its terminal state. A dropped stream is reopened with Last-Event-ID, so
// only later states come; a 204 then means the job had already ended.
import { setTimeout as sleep } from 'node:timers/promises';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { TERMINAL, type Api, type JobView } from './api.js';
import { CliError } from './errors.js';

const RECONNECTS = 5;

/** `until`: stop following (and answer that state) as soon as it says so, terminal or not. */
export async function followJob(api: Api, id: string, onJob: (job: JobView) => void, until?: (job: JobView) => boolean): Promise<JobView> {
  let lastEventId: string | undefined;
  let last: JobView | undefined;
  for (let attempt = 0; ; attempt += 1) {
    const res = await api.request(`/api/v1/jobs/${encodeURIComponent(id)}/events`, {
      headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });
    if (res.status === 204) return last ?? api.job(id);
    if (!res.ok) return api.fail(res);
    try {
      const events = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      for await (const event of events) {
        if (event.event !== 'job') continue;
        lastEventId = event.id ?? lastEventId;
        last = JSON.parse(event.data) as JobView;
        if (until?.(last)) return last;
        onJob(last);
        if (TERMINAL.has(last.status)) return last;
      }
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      // A cut connection: reopen below.
    }
    if (attempt >= RECONNECTS) throw new CliError(`the server kept closing the event stream of job ${id}.`, `See where it stands with \`reelay job ${id}\`.`);
    await sleep(500 * (attempt + 1), undefined, { signal: api.signal });
  }
}
