// Helpers for the account and surface A tests: unique addresses and e-mails (test files share one
// Redis), a signed-in agent, and the error envelope check.
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import { expect } from '@jest/globals';
import request from 'supertest';

export const PASSWORD = 'correct horse battery staple';

export const uniqueEmail = () => `user-${randomBytes(6).toString('hex')}@example.com`;
/** A client address of its own, sent as X-Forwarded-For (the test gateways trust the proxy). */
export const uniqueIp = () => `10.${[...randomBytes(3)].join('.')}`;

export function expectError(res: request.Response, status: number, code: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { success: false, error: { code, message: expect.any(String) } },
  });
}

export interface SignedInAgent {
  agent: ReturnType<typeof request.agent>;
  email: string;
  ip: string;
}

/** Signs up a new account; the agent keeps its session cookie and its own client address. */
export async function signUp(app: Express): Promise<SignedInAgent> {
  const email = uniqueEmail();
  const ip = uniqueIp();
  const agent = request.agent(app).set('X-Forwarded-For', ip);
  await agent.post('/account/signup').send({ email, password: PASSWORD }).expect(201);
  return { agent, email, ip };
}

export async function createKey(
  agent: SignedInAgent['agent'],
  name = 'test app',
): Promise<{ id: string; secret: string; prefix: string }> {
  return (await agent.post('/account/keys').send({ name }).expect(201)).body.data;
}

/** Retries an assertion until it holds or `ms` pass (usage is counted just after a response). */
export async function eventually(check: () => Promise<void>, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
