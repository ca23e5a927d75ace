// Usage per API key: every request to a route that takes an API key (X-API-Key), made with a key its
// account still has, is counted for that key once its response is finished (total, successful 2xx,
// last used), whatever the route and whatever the answer. The app puts this on each route whose spec
// says it takes `apiKey` (alone or among other ways in), so a new route that takes a key is counted
// without a line of its own.
import type { RequestHandler } from 'express';
import { hashSecret, type AccountServices } from '@reelay/accounts';
import type { Logger } from '@reelay/observability';

/** Longer than any key reelay issues (`rly_` + 43 characters): such a header is no key of ours. */
const MAX_KEY_LENGTH = 200;

export function countKeyUsage(deps: { usage: AccountServices['usage']; logger: Logger }): RequestHandler {
  return (req, res, next) => {
    const secret = req.get('x-api-key')?.trim();
    if (secret && secret.length <= MAX_KEY_LENGTH) {
      const keyHash = hashSecret(secret);
      // 'close' follows 'finish' and also fires when the client goes away: every request is counted
      // once. The count is off the request's critical path, and adds nothing for an unknown key.
      res.once('close', () => {
        const successful = res.writableFinished && res.statusCode >= 200 && res.statusCode < 300;
        deps.usage
          .record(keyHash, successful)
          .catch((err: unknown) => deps.logger.warn({ err }, 'could not count API key usage'));
      });
    }
    next();
  };
}
