// The Docker files, checked without a Docker engine: the Dockerfile passes dockerfile-utils' validator
// (the VS Code Docker extension's; hadolint is not installable here) and the properties the image
// needs, and docker-compose.yml validates and has the healthchecks, init and startup order. The
// image's install itself is exercised by scripts/image-smoke.sh, which .ci/run runs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@jest/globals';
import { validate } from 'dockerfile-utils';
import { describeWithTools } from '@reelay/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (name: string) => fs.readFileSync(path.join(ROOT, name), 'utf8');

test('the Dockerfile has no problems dockerfile-utils can see', () => {
  const problems = validate(read('Dockerfile')).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  expect(problems).toEqual([]);
  // The validator itself finds problems (so an empty list above means something).
  expect(validate('FROM node\nMAINTAINER me\nCOPY\n').length).toBeGreaterThan(0);
});

test('the image builds on a Node LTS line with the shared install script, not `pnpm prune`', () => {
  const dockerfile = read('Dockerfile');
  const bases = [...dockerfile.matchAll(/^FROM\s+node:(\d+)[-\w.]*/gm)].map((m) => Number(m[1]));
  expect(bases.length).toBe(2);
  // Even majors are the LTS lines; 20 reached end of life in April 2026.
  for (const major of bases) expect({ major, lts: major % 2 === 0 && major >= 22 }).toEqual({ major, lts: true });
  expect(dockerfile).not.toMatch(/pnpm prune/);
  expect(dockerfile).toMatch(/^RUN sh scripts\/image-install\.sh \/app$/m);
  expect(dockerfile).toMatch(/^HEALTHCHECK /m);
  expect(dockerfile).toMatch(/^USER node$/m);
  const install = read('scripts/image-install.sh');
  expect(install).toMatch(/pnpm --filter "@reelay\/\$app" deploy --prod --legacy/);
  expect(install).toMatch(/pnpm install --frozen-lockfile/);
});

test('.dockerignore keeps dependencies, build output, local data and secrets out of the build context', () => {
  const ignored = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const entry of ['**/node_modules', '**/dist', 'data', '.env', '.git']) expect(ignored).toContain(entry);
});

test('docker-compose.yml starts each app only once Redis is healthy, with init and a healthcheck', () => {
  const compose = read('docker-compose.yml');
  expect(compose).not.toMatch(/^version:/m);
  for (const service of ['gateway', 'worker']) {
    const block = new RegExp(`^  ${service}:\\n((?:    .*\\n|\\n)*)`, 'm').exec(compose)?.[1] ?? '';
    expect({ service, init: /^ {4}init: true$/m.test(block) }).toEqual({ service, init: true });
    expect({ service, healthcheck: /^ {4}healthcheck:\n {6}test: .*\/(healthz|readyz)/m.test(block) }).toEqual({
      service,
      healthcheck: true,
    });
    expect({
      service,
      dependsOnHealthy: /^ {4}depends_on:\n {6}redis:\n {8}condition: service_healthy$/m.test(block),
    }).toEqual({ service, dependsOnHealthy: true });
    expect(block).toMatch(new RegExp(`"${service}/dist/main.js"`));
  }
  const worker = /^ {2}worker:\n((?: {4}.*\n|\n)*)/m.exec(compose)![1];
  // Docker's stop must wait past the worker's hand-back grace, or jobs wait for their lock to lapse.
  const grace = Number(/SHUTDOWN_GRACE_SECONDS: "(\d+)"/.exec(worker)?.[1]);
  const stop = Number(/stop_grace_period: (\d+)s/.exec(worker)?.[1]);
  expect(stop).toBeGreaterThan(grace);
});

describeWithTools('docker-compose', [{ bin: 'docker-compose', install: 'apt-get install docker-compose' }], () => {
  test('validates docker-compose.yml', () => {
    const cli = spawnSync('docker-compose', ['-f', path.join(ROOT, 'docker-compose.yml'), 'config', '-q'], {
      encoding: 'utf8',
    });
    expect({ status: cli.status, stderr: cli.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
