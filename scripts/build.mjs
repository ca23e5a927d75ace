// `pnpm start`'s build step: `tsc -b` over tsconfig.build.json with a line on stderr for each project
// it builds, so the half minute of a first build is not silence. tsc's own progress (--verbose) is read
// and reduced to those lines; anything else it prints (errors, their summary) is passed on as it is.
import { spawn } from 'node:child_process';
import path from 'node:path';

// tsc's verbose messages start with its clock ("6:18:11 PM - " or "18:18:11 - ", by locale).
const MESSAGE = /^\d{1,2}:\d{2}:\d{2}(?:\s?[AP]M)? - (.*)$/;
const LISTED = /^\s+\* (.+)$/;
const BUILDING = /^Building project '(.+)'\.\.\.$/;

/** The folder a project's tsconfig.json is in, relative to the repository: "apps/gateway". */
const projectName = (root, tsconfig) => path.dirname(path.relative(root, path.resolve(root, tsconfig))) || '.';

/**
 * Reads tsc's output line by line: `onStep(name, n, total)` for each project it starts to build, and
 * `onOther(line)` for every line that is not its verbose progress. Returns the count of projects built.
 */
export function stepReader(root, onStep, onOther) {
  const projects = [];
  let listing = false;
  let built = 0;
  return {
    line(line) {
      const message = MESSAGE.exec(line)?.[1];
      if (message !== undefined) {
        listing = message.startsWith('Projects in this build:');
        const building = BUILDING.exec(message);
        if (building) {
          const name = projectName(root, building[1]);
          built += 1;
          onStep(name, projects.indexOf(name) + 1 || built, projects.length || built);
        }
        return;
      }
      const listed = listing ? LISTED.exec(line) : null;
      if (listed) {
        // The solution file itself holds no code: not a step.
        if (listed[1] !== 'tsconfig.build.json') projects.push(projectName(root, listed[1]));
        return;
      }
      listing = false;
      if (line.trim() !== '') onOther(line);
    },
    get built() {
      return built;
    },
    get total() {
      return projects.length;
    },
  };
}

/** Runs the build, saying each step through `say`; resolves tsc's exit status. */
export function build(root, say) {
  const startedAt = Date.now();
  say('building what changed since the last build (tsc -b; a first build takes about half a minute)…');
  const reader = stepReader(
    root,
    (name, n, total) => say(`building ${name} (${n} of ${total})…`),
    (line) => process.stderr.write(`${line}\n`),
  );
  const tsc = spawn(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', '--verbose', 'tsconfig.build.json'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  for (const stream of [tsc.stdout, tsc.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) reader.line(line.replace(/\r$/, ''));
    });
    stream.on('end', () => partial && reader.line(partial));
  }
  return new Promise((resolve) => {
    tsc.once('error', (err) => {
      say(`could not run tsc: ${err.message}`);
      resolve(1);
    });
    tsc.once('close', (code) => {
      const seconds = Math.round((Date.now() - startedAt) / 1000);
      if (code === 0)
        say(
          reader.built === 0
            ? `the build is up to date (${reader.total} projects checked in ${seconds} s)`
            : `built ${reader.built} of ${reader.total} projects in ${seconds} s`,
        );
      resolve(code ?? 1);
    });
  });
}
