// Which Redis failures mean "the service is unavailable" (503 service_unavailable, DESIGN.md "Safe in
// public") rather than a bug (500): no answer in time, a connection that is gone, and the error
// replies a healthy deployment passes through — a full disk (MISCONF), memory full (OOM), a restart
// still loading (LOADING), a replica or a demoted primary (READONLY), a primary without its replicas
// or sentinels' quorum (MASTERDOWN, NOREPLICAS), a long script (BUSY), a cluster moving slots
// (TRYAGAIN, CLUSTERDOWN), a password that no longer matches (NOAUTH, WRONGPASS). Any other reply
// (a wrong type, a bad script) is reelay's bug and stays a 500.
// Recognised by shape (ioredis' error names and messages).
import { ReelayError } from '@reelay/contracts';

const UNAVAILABLE_REPLIES =
  /^(MISCONF|OOM|LOADING|READONLY|MASTERDOWN|NOREPLICAS|BUSY|TRYAGAIN|CLUSTERDOWN|NOAUTH|WRONGPASS)\b/;

// ioredis' own failures: commandTimeout, a closed or closing connection, no offline queue while
// reconnecting, retries used up. Raw socket codes (ECONNREFUSED…) are not matched: an origin's
// failure carries them too, and it is not Redis that failed then.
const CLIENT_FAILURES =
  /^(Command timed out|Connection is closed|Stream isn't writeable|Reached the max retries per request limit)/;

function isUnavailable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 3) return false;
  if (err.name === 'ReplyError') {
    if (UNAVAILABLE_REPLIES.test(err.message)) return true;
    // EXECABORT: a MULTI whose queued commands Redis refused (OOM, READONLY) is discarded whole.
    const previous = (err as { previousErrors?: unknown[] }).previousErrors;
    return (
      err.message.startsWith('EXECABORT') &&
      Array.isArray(previous) &&
      previous.some((e) => isUnavailable(e, depth + 1))
    );
  }
  if (err.name === 'MaxRetriesPerRequestError' || CLIENT_FAILURES.test(err.message)) return true;
  return isUnavailable(err.cause, depth + 1);
}

/** service_unavailable for a Redis failure of the kinds above; undefined for anything else. */
export function redisUnavailable(err: unknown): ReelayError | undefined {
  if (err instanceof ReelayError || !isUnavailable(err)) return undefined;
  return new ReelayError('service_unavailable', 'Redis is unavailable or refusing writes; try again shortly.', {
    cause: err,
  });
}
