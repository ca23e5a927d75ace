// Who owns a request to an account's resources (subscriptions): an enabled API key in X-API-Key, or
// the web app's session cookie (whose writes must be same-origin). 401 otherwise. Sets req.ownerId.
import type { RequestHandler } from 'express';
import type { RedisClient } from '@reelay/redis';
import { apiKeyRecord, hashSecret, type SessionStore } from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';
import { sameOrigin } from './same-origin.js';
import { readCookie, SESSION_COOKIE } from './session.js';

declare global {
  namespace Express {
    interface Request {
      /** The account the request acts for (set by requireOwner). */
      ownerId?: string;
    }
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function requireOwner(deps: { redis: RedisClient; sessions: SessionStore }): RequestHandler {
  return async (req, res, next) => {
    const secret = req.get('x-api-key');
    try {
      if (secret !== undefined) {
        const fields =
          secret.length > 0 && secret.length <= 200
            ? await deps.redis.hmget(apiKeyRecord(hashSecret(secret)), 'account_id', 'enabled')
            : [null, null];
        const [accountId, enabled] = fields;
        if (!accountId)
          throw new ReelayError('invalid_api_key', 'The API key is not valid: it is unknown or has been deleted.');
        if (enabled !== '1') throw new ReelayError('api_key_disabled', 'This API key is disabled.');
        req.ownerId = accountId;
        return next();
      }
      const sessionId = readCookie(req, SESSION_COOKIE);
      const session = sessionId ? await deps.sessions.get(sessionId) : undefined;
      if (!session)
        throw new ReelayError(
          'api_key_required',
          'Subscriptions need an API key in the X-API-Key header, or a signed-in web app session.',
        );
      req.ownerId = session.account_id;
      if (SAFE.has(req.method)) return next();
      sameOrigin(req, res, next);
    } catch (err) {
      if (err instanceof ReelayError) return next(err);
      next(
        new ReelayError('service_unavailable', 'Accounts are unavailable (Redis); try again shortly.', { cause: err }),
      );
    }
  };
}
