// Who owns a request: an enabled API key in X-API-Key, or the web app's session cookie. Account
// resources (subscriptions) require one (401 otherwise; cookie writes must be same-origin); a job
// records the account that asked for it, when there is one, as the one that may control it.
import type { Request, RequestHandler } from 'express';
import type { RedisClient } from '@reelay/redis';
import { apiKeyRecord, hashSecret, type SessionStore } from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';
import { isCrossSite, sameOrigin } from './same-origin.js';
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

export interface OwnerDeps {
  redis: RedisClient;
  sessions: SessionStore;
}

export interface Owner {
  accountId: string;
  via: 'key' | 'session';
}

/**
 * The account a request names, if any: the API key's (an unknown or disabled key is refused, never
 * taken for no key), else the session's. Throws service_unavailable when Redis does not answer.
 */
export async function ownerOf(deps: OwnerDeps, req: Request): Promise<Owner | undefined> {
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
      return { accountId, via: 'key' };
    }
    const sessionId = readCookie(req, SESSION_COOKIE);
    const session = sessionId ? await deps.sessions.get(sessionId) : undefined;
    return session ? { accountId: session.account_id, via: 'session' } : undefined;
  } catch (err) {
    if (err instanceof ReelayError) throw err;
    throw new ReelayError('service_unavailable', 'Accounts are unavailable (Redis); try again shortly.', {
      cause: err,
    });
  }
}

/**
 * The account a job is asked for or controlled by: as ownerOf, but a session counts only on a
 * request from this site (a cookie another site's page made the browser send proves nothing).
 */
export async function jobOwnerOf(deps: OwnerDeps, req: Request): Promise<string | undefined> {
  const owner = await ownerOf(deps, req);
  if (owner?.via === 'session' && isCrossSite(req)) return undefined;
  return owner?.accountId;
}

export function requireOwner(deps: OwnerDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const owner = await ownerOf(deps, req);
      if (!owner)
        throw new ReelayError(
          'api_key_required',
          'Subscriptions need an API key in the X-API-Key header, or a signed-in web app session.',
        );
      req.ownerId = owner.accountId;
      if (owner.via === 'key' || SAFE.has(req.method)) return next();
      sameOrigin(req, res, next);
    } catch (err) {
      next(err);
    }
  };
}
