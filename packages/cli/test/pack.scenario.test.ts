// The packed CLI installs on its own: `pnpm pack` makes a tarball whose one bundled file carries every
// dependency (@reelay/contracts is on no registry), so `npm install --offline` with an empty cache and
// a registry that answers nothing installs it, and the installed `reelay` runs away from the checkout.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ROOT } from './helpers.js';

const run = promisify(execFile);
const version = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string }
).version;
let tmp: string;
let tarball: string;
let installed: string;
let npmOutput: string;

// Nothing may come from a registry: npm is offline, its cache is new and empty, and the registry it
// would ask is a closed local port.
const offlineEnv = () => ({
  ...process.env,
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
});

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-pack-'));
  await run('pnpm', ['--filter', '@reelay/cli', 'pack', '--pack-destination', tmp], { cwd: ROOT, timeout: 90_000 });
  tarball = path.join(tmp, `reelay-cli-${version}.tgz`);
  const prefix = path.join(tmp, 'prefix');
  const npm = await run(
    'npm',
    ['install', '--offline', '--cache', path.join(tmp, 'cache'), '--prefix', prefix, tarball],
    { cwd: tmp, env: offlineEnv(), timeout: 60_000 },
  );
  npmOutput = npm.stdout + npm.stderr;
  installed = path.join(prefix, 'node_modules/.bin/reelay');
}, 150_000);

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the packed CLI', () => {
  test('is one bundled file, its licences and a manifest with no dependency to fetch', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    expect(stdout.trim().split('\n').sort()).toEqual([
      'package/dist/THIRD-PARTY-LICENSES.txt',
      'package/dist/reelay.js',
      'package/package.json',
    ]);
    const manifest = JSON.parse((await run('tar', ['xzf', tarball, '-O', 'package/package.json'])).stdout) as Record<
      string,
      unknown
    >;
    expect(manifest.bin).toEqual({ reelay: './dist/reelay.js' });
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.optionalDependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
  });

  test('installs offline from the tarball alone, as one package', () => {
    expect(npmOutput).toMatch(/added 1 package/);
    const modules = path.join(tmp, 'prefix/node_modules');
    expect(fs.readdirSync(modules).filter((name) => !name.startsWith('.'))).toEqual(['@reelay']);
    expect(fs.readdirSync(path.join(modules, '@reelay'))).toEqual(['cli']);
    // A copy, not a link back into the checkout.
    expect(fs.lstatSync(path.join(modules, '@reelay/cli')).isSymbolicLink()).toBe(false);
  });

  test('runs `reelay --help` and `reelay --version` from the install', async () => {
    const help = await run(installed, ['--help'], { cwd: tmp, timeout: 20_000 });
    expect(help.stdout).toMatch(/^Usage: reelay /);
    for (const command of ['get', 'extract', 'job']) expect(help.stdout).toContain(`\n  ${command} `);
    const shown = await run(installed, ['--version'], { cwd: tmp, timeout: 20_000 });
    expect(shown.stdout.trim()).toBe(version);
  });

  test('answers a usage error with exit status 2, as the built CLI does', async () => {
    const failed = await run(installed, ['get', 'not a url'], { cwd: tmp, timeout: 20_000 }).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toMatch(/reelay/);
  });
});
