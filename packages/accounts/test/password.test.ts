import { describe, expect, test } from '@jest/globals';
import { dummyHash, hashPassword, verifyPassword } from '../src/index.js';

describe('password hashing', () => {
  test('a hash stores scrypt with its parameters and a fresh 16-byte salt', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse'), hashPassword('correct horse')]);
    const [scheme, n, r, p, salt, key] = a.split('$');
    expect({ scheme, n, r, p }).toEqual({ scheme: 'scrypt', n: '16384', r: '8', p: '1' });
    expect(Buffer.from(salt, 'base64')).toHaveLength(16);
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct horse');
  });

  test('the right password verifies and a wrong one does not', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  test('the same password in another Unicode form verifies (NFKC)', async () => {
    expect(await verifyPassword('cafe\u0301 au lait', await hashPassword('caf\u00e9 au lait'))).toBe(true);
  });

  test('a malformed stored hash never matches', async () => {
    for (const stored of ['', 'plain', 'scrypt$0$8$1$AAAA$AAAA', 'bcrypt$16384$8$1$AAAA$AAAA', 'scrypt$16384$8$1$$']) {
      expect(await verifyPassword('anything at all', stored)).toBe(false);
    }
  });

  test('the dummy hash is a real hash that no guess matches, made once', async () => {
    const dummy = await dummyHash();
    expect(dummy).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await dummyHash()).toBe(dummy);
    expect(await verifyPassword('password123', dummy)).toBe(false);
  });
});
