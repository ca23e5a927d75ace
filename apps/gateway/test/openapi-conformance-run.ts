// Runs the document's generated requests against a listening gateway (./openapi-conformance.ts says
// how they are made and judged): each as its operation's security asks (a session, an API key, or
// nothing), from a client address of its own, and collects every disagreement.
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import type { RedisClient } from '@reelay/redis';
import { signUp, uniqueIp, type SignedInAgent } from './account-helpers.js';
import {
  Conformance,
  type Answer,
  type Case,
  type Document,
  type Finding,
  type Operation,
} from './openapi-conformance.js';

export interface ConformanceResult {
  findings: Finding[];
  /** Requests sent that the document allows, and that it does not, by operation. */
  counts: Record<string, { allowed: number; refused: number; ms: number }>;
  sent: number;
}

/**
 * A gateway made for a run: a deployment webhook secret, limits out of the way, mail on (to a closed
 * port: nothing is delivered) and a public URL, so the mail and passkey routes answer past their 503.
 */
export const CONFORMANCE_ENV = {
  TRUST_PROXY: 'true',
  SMTP_URL: 'smtp://127.0.0.1:9',
  MAIL_FROM: 'conformance@example.com',
  PUBLIC_URL: 'http://localhost',
  WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
  RATE_LIMIT_KEY_PER_MIN: '1000000',
  RATE_LIMIT_PUBLIC_PER_MIN: '1000000',
};

/** A signed-in account whose address counts as confirmed (keys need one while mail is on). */
export async function confirmedAccount(server: Server, redis: RedisClient): Promise<SignedInAgent> {
  const signedIn = await signUp(server as unknown as Parameters<typeof signUp>[0]);
  const record = `reelay:account:${createHash('sha256').update(signedIn.email).digest('hex')}`;
  await redis.set(record, JSON.stringify({ ...JSON.parse((await redis.get(record))!), email_verified: true }));
  return signedIn;
}

export async function runConformance(
  server: Server,
  redis: RedisClient,
  options: { perKind: number; seed: number; only?: (op: Operation) => boolean },
): Promise<ConformanceResult> {
  const doc = (await request(server).get('/api/openapi.json').expect(200)).body as Document;
  const conformance = new Conformance(doc);
  const result: ConformanceResult = { findings: [], counts: {}, sent: 0 };
  for (const [index, op] of conformance.operations().entries()) {
    if (options.only && !options.only(op)) continue;
    const started = Date.now();
    // A session and a key of the operation's own: requests of another (a sign-out, a deleted key) never reach it.
    let session = await confirmedAccount(server, redis);
    const apiKey: string = (await session.agent.post('/account/keys').send({ name: 'conformance' }).expect(201)).body
      .data.secret;
    const counts = (result.counts[op.key] = { allowed: 0, refused: 0, ms: 0 });
    for (const c of conformance.cases(op, options.perKind, options.seed + index * 7919)) {
      const answer = await send(server, op, c, session, apiKey);
      result.sent++;
      counts[c.allowed ? 'allowed' : 'refused']++;
      const finding = conformance.check(op, c, answer);
      if (finding) result.findings.push(finding);
      // An allowed request may end the session (a sign-out, a deleted account): later ones get a new one.
      if (op.security.some((s) => 'session' in s) && answer.status < 300 && op.method !== 'get')
        if ((await session.agent.get('/account/me')).status === 401) session = await confirmedAccount(server, redis);
    }
    counts.ms = Date.now() - started;
  }
  return result;
}

/** Sends one generated request as its operation's security asks, from a client address of its own. */
export async function send(
  server: Server,
  op: Operation,
  c: Case,
  session: SignedInAgent,
  apiKey: string,
): Promise<Answer> {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(c.path[name] ?? 'x').replace(/\./g, '%2E'),
  );
  const query = new URLSearchParams(c.query).toString();
  const url = query ? `${path}?${query}` : path;
  const agent = op.security.some((s) => 'session' in s) ? session.agent : request(server);
  let req = agent[op.method](url).set('X-Forwarded-For', uniqueIp());
  if (op.security.some((s) => 'apiKey' in s)) req = req.set('X-API-Key', apiKey);
  for (const [name, value] of Object.entries(c.headers)) req = req.set(name, value);
  // As JSON whatever its type, so a body that is a string or a number is a JSON body too.
  const res = await (c.body === undefined
    ? req
    : req.set('Content-Type', 'application/json').send(JSON.stringify(c.body)));
  return { status: res.status, body: res.body as Answer['body'] };
}

/** Findings grouped by what went wrong (operation, kind, status, code, message with numbers as #), the shortest request of each. */
export function summarise(findings: Finding[]): string[] {
  const groups = new Map<string, Finding>();
  for (const f of findings) {
    const key = `${f.operation} | ${f.kind} | ${f.status} ${f.code ?? ''} | ${(f.message ?? '').replace(/\d+/g, '#').slice(0, 160)}`;
    const known = groups.get(key);
    if (!known || JSON.stringify(f.request).length < JSON.stringify(known.request).length) groups.set(key, f);
  }
  return [...groups.entries()].map(
    ([key, f]) => `${key}\n    ${JSON.stringify(f.request).slice(0, 400)}${f.why ? `\n    document: ${f.why}` : ''}`,
  );
}
