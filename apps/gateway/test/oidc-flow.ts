// A browser's way through social sign-in for the account tests: users at the test provider
// (oidc-issuer.ts, or the GitHub stand-in), and the redirects followed as a browser follows them, with
// its own cookie jar at the provider, until the provider sends it back to reelay.
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { uniqueIp } from './account-helpers.js';
import type { Issuer } from './oidc-issuer.js';

export type Agent = ReturnType<typeof request.agent>;

export interface OidcFlow {
  /** A browser of its own client address. */
  browser(): Agent;
  /** A new user at the test provider; returns its subject. */
  idpUser(email: string | undefined, verified: boolean): string;
  /** Follows the provider's redirects, signing in `user`; returns the callback's path and query. */
  throughProvider(location: string, user: string): Promise<string>;
  /** GET /account/oauth/{provider}/start: the provider's page. */
  start(agent: Agent, provider?: string, query?: string): Promise<URL>;
  /** The whole sign-in: start, the provider, then reelay's answer to the callback. */
  signInWith(agent: Agent, user: string, provider?: string, query?: string): Promise<request.Response>;
}

export function oidcFlow(options: {
  app: () => Express;
  issuer: () => Issuer;
  publicUrl: string;
  /** Codes and states seen in callback URLs are added here (tests check none reaches a log). */
  seen?: string[];
}): OidcFlow {
  const flow: OidcFlow = {
    browser: () => request.agent(options.app()).set('X-Forwarded-For', uniqueIp()),
    idpUser(email, verified) {
      const sub = `user-${randomBytes(6).toString('hex')}`;
      options.issuer().users.set(sub, { email, email_verified: verified });
      return sub;
    },
    async throughProvider(location, user) {
      const jar = new Map<string, string>();
      let url = new URL(location);
      for (let hop = 0; hop < 12; hop++) {
        if (url.origin === options.publicUrl) {
          for (const name of ['code', 'state'])
            if (url.searchParams.get(name)) options.seen?.push(url.searchParams.get(name)!);
          return url.pathname + url.search;
        }
        if (url.pathname.startsWith('/interaction/')) url.searchParams.set('user', user);
        if (url.pathname === '/login/oauth/authorize') url.searchParams.set('login', user);
        const res = await fetch(url, {
          redirect: 'manual',
          headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        for (const cookie of res.headers.getSetCookie()) {
          const [pair] = cookie.split(';');
          jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
        }
        const body = await res.text();
        const next = res.headers.get('location');
        if (!next) throw new Error(`the provider answered ${res.status} without a redirect: ${body.slice(0, 300)}`);
        url = new URL(next, url);
      }
      throw new Error('too many redirects at the provider');
    },
    async start(agent, provider = 'test', query = '') {
      const res = await agent.get(`/account/oauth/${provider}/start${query}`).expect(302);
      return new URL(res.headers.location);
    },
    async signInWith(agent, user, provider = 'test', query = '') {
      return agent.get(await flow.throughProvider((await flow.start(agent, provider, query)).href, user));
    },
  };
  return flow;
}
