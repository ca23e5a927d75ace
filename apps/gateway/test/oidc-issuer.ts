// A real OpenID provider for the social sign-in tests: npm's oidc-provider (a certified OP) on
// 127.0.0.1, with users whose e-mail is verified or not. The login and consent screens are replaced
// by a handler that signs in the user the test names (`?user=` on the interaction URL), so a test
// drives the whole flow with plain HTTP requests.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface IssuerUser {
  email?: string;
  email_verified?: boolean;
}

export interface Issuer {
  issuer: string;
  users: Map<string, IssuerUser>;
  close(): Promise<void>;
}

export async function startIssuer(client: {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}): Promise<Issuer> {
  const users = new Map<string, IssuerUser>();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const provider = new Provider(issuer, {
    clients: [{ ...client, grant_types: ['authorization_code'], response_types: ['code'] }],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' }] as never },
    cookies: { keys: ['reelay test cookie key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const user = users.get(sub);
      return user ? { accountId: sub, claims: () => ({ sub, ...user }) } : undefined;
    },
  });
  const callback = provider.callback();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    if (!url.pathname.startsWith('/interaction/')) return callback(req, res);
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: url.searchParams.get('user') ?? '' } },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const grant = new provider.Grant({
        accountId: details.session!.accountId,
        clientId: String(details.params.client_id),
      });
      grant.addOIDCScope('openid email profile');
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
    })().catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  return {
    issuer,
    users,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
