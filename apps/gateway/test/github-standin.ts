// A local stand-in of GitHub's OAuth app endpoints and the two REST calls reelay makes: the
// authorize page (which signs in the user the test names and redirects at once), the code exchange
// (client secret, single-use code and PKCE S256 checked, as GitHub does), `/user` and `/user/emails`.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GithubUser {
  id: number;
  login: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface GithubStandIn {
  url: string;
  users: Map<string, GithubUser>;
  /** Every code and access token handed out (the log test looks for them). */
  secrets: string[];
  close(): Promise<void>;
}

export async function startGithub(client: { id: string; secret: string }): Promise<GithubStandIn> {
  const users = new Map<string, GithubUser>();
  const codes = new Map<string, { user: GithubUser; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, GithubUser>();
  const secrets: string[] = [];
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const user = users.get(url.searchParams.get('login') ?? '');
      const redirectUri = url.searchParams.get('redirect_uri') ?? '';
      if (
        !user ||
        url.searchParams.get('client_id') !== client.id ||
        url.searchParams.get('code_challenge_method') !== 'S256'
      )
        return json(res, 400, { error: 'bad request' });
      const code = randomBytes(10).toString('hex');
      secrets.push(code);
      codes.set(code, { user, challenge: url.searchParams.get('code_challenge') ?? '', redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        // GitHub answers errors with 200 and an error field.
        if (form.get('client_id') !== client.id || form.get('client_secret') !== client.secret)
          return json(res, 200, { error: 'incorrect_client_credentials' });
        if (!grant || grant.redirectUri !== form.get('redirect_uri'))
          return json(res, 200, { error: 'bad_verification_code' });
        if (challenge !== grant.challenge)
          return json(res, 200, { error: 'bad_verification_code', error_description: 'PKCE verification failed' });
        const token = `gho_${randomBytes(16).toString('hex')}`;
        secrets.push(token);
        tokens.set(token, grant.user);
        json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      });
      return;
    }
    const user = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!user) return json(res, 401, { message: 'Bad credentials' });
    if (url.pathname === '/api/user') return json(res, 200, { id: user.id, login: user.login });
    if (url.pathname === '/api/user/emails')
      return json(
        res,
        200,
        user.emails.map((e) => ({ ...e, visibility: null })),
      );
    json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    users,
    secrets,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
