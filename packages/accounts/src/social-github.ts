// GitHub's OAuth app, which is OAuth 2 without OpenID Connect: no ID token and no nonce, so the
// user is read from the REST API (`/user` for the stable numeric id, `/user/emails` for the primary
// address and whether GitHub verified it). The code exchange goes through openid-client with PKCE
// S256 and state checked; base URLs are settings so tests can run a local stand-in of GitHub.
import * as client from 'openid-client';
import { z } from 'zod';
import type { FlowChecks, SocialProfile, SocialProvider } from './social.js';

export interface GithubSettings {
  clientId: string;
  clientSecret: string;
  /** https://github.com, where /login/oauth/authorize and /login/oauth/access_token live. */
  oauthUrl: string;
  /** https://api.github.com */
  apiUrl: string;
}

const UserSchema = z.object({ id: z.number().int(), login: z.string().optional() });
const EmailsSchema = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() })).max(500);

export class GithubProvider implements SocialProvider {
  readonly id = 'github';
  readonly name = 'GitHub';
  private readonly config: client.Configuration;

  constructor(
    private readonly settings: GithubSettings,
    private readonly fetch: client.CustomFetch,
  ) {
    const base = settings.oauthUrl.replace(/\/$/, '');
    this.config = new client.Configuration(
      {
        issuer: base,
        authorization_endpoint: `${base}/login/oauth/authorize`,
        token_endpoint: `${base}/login/oauth/access_token`,
      },
      settings.clientId,
      settings.clientSecret,
      client.ClientSecretPost(settings.clientSecret),
    );
    this.config[client.customFetch] = fetch;
    if (new URL(base).protocol === 'http:') client.allowInsecureRequests(this.config);
  }

  async authorizationUrl(checks: FlowChecks): Promise<URL> {
    return client.buildAuthorizationUrl(this.config, {
      redirect_uri: checks.redirectUri,
      scope: 'read:user user:email',
      state: checks.state,
      code_challenge: await client.calculatePKCECodeChallenge(checks.verifier),
      code_challenge_method: 'S256',
      allow_signup: 'true',
    });
  }

  async finish(callbackUrl: URL, checks: FlowChecks): Promise<SocialProfile> {
    // GitHub sends no `iss` in the callback; openid-client then needs none.
    const tokens = await client.authorizationCodeGrant(this.config, callbackUrl, {
      pkceCodeVerifier: checks.verifier,
      expectedState: checks.state,
      idTokenExpected: false,
    });
    const api = this.settings.apiUrl.replace(/\/$/, '');
    const user = UserSchema.parse(await this.get(`${api}/user`, tokens.access_token));
    const emails = EmailsSchema.parse(await this.get(`${api}/user/emails`, tokens.access_token));
    const primary = emails.find((e) => e.primary) ?? emails.find((e) => e.verified);
    return {
      subject: String(user.id),
      email: primary?.email.trim().toLowerCase(),
      emailVerified: primary?.verified === true,
    };
  }

  private async get(url: string, token: string): Promise<unknown> {
    const res = await this.fetch(url, {
      method: 'GET',
      body: undefined,
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${token}`,
        'x-github-api-version': '2022-11-28',
      },
      redirect: 'manual',
    });
    if (!res.ok) throw new Error(`GitHub answered ${res.status} for ${new URL(url).pathname}`);
    return res.json();
  }
}
