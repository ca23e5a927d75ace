// Any OpenID Connect provider, found by discovery, through openid-client (a certified relying party):
// authorization code with PKCE S256, state and nonce; the ID token's signature, issuer, audience,
// expiry and nonce are checked by the library. The e-mail and whether it is verified come from the
// ID token's claims (or the userinfo endpoint when the token leaves them out).
import * as client from 'openid-client';
import type { FlowChecks, SocialProfile, SocialProvider } from './social.js';

export interface OidcSettings {
  id: string;
  name: string;
  issuer: string;
  client_id: string;
  client_secret?: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export class OidcProvider implements SocialProvider {
  readonly id: string;
  readonly name: string;
  private config?: Promise<client.Configuration>;

  constructor(
    private readonly settings: OidcSettings,
    private readonly fetch: client.CustomFetch,
  ) {
    this.id = settings.id;
    this.name = settings.name;
    const issuer = new URL(settings.issuer);
    if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname))) {
      throw new Error(
        `OIDC provider ${settings.id}: the issuer must be https:// (http:// only on the loopback, for tests)`,
      );
    }
  }

  /** The provider's metadata, discovered once; a failed discovery is tried again next time. */
  private configuration(): Promise<client.Configuration> {
    this.config ??= (async () => {
      const issuer = new URL(this.settings.issuer);
      const execute = issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [];
      const auth = this.settings.client_secret ? client.ClientSecretBasic(this.settings.client_secret) : client.None();
      return client.discovery(issuer, this.settings.client_id, this.settings.client_secret, auth, {
        [client.customFetch]: this.fetch,
        execute,
        timeout: 10,
      });
    })().catch((err: unknown) => {
      this.config = undefined;
      throw err;
    });
    return this.config;
  }

  async authorizationUrl(checks: FlowChecks): Promise<URL> {
    const config = await this.configuration();
    return client.buildAuthorizationUrl(config, {
      redirect_uri: checks.redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.verifier),
      code_challenge_method: 'S256',
    });
  }

  async finish(callbackUrl: URL, checks: FlowChecks): Promise<SocialProfile> {
    const config = await this.configuration();
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: checks.verifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('no ID token');
    let email = typeof claims.email === 'string' ? claims.email : undefined;
    let verified = claims.email_verified === true;
    if (!email && tokens.access_token) {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      email = typeof info.email === 'string' ? info.email : undefined;
      verified = info.email_verified === true;
    }
    return { subject: claims.sub, email: email?.trim().toLowerCase(), emailVerified: Boolean(email) && verified };
  }
}
