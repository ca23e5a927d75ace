#!/usr/bin/env node
// Ranks test files by duration from what scripts/test-timings.mjs wrote (several files are added up,
// e.g. the suite's and the scenarios'), so a change to the suite's speed is measured per file rather
// than by the wall clock of a shared, loaded machine:
//   node scripts/slowest-tests.mjs [count] timings.tsv [more.tsv …]
// The sum of per-file durations is the relative cost; wall time is about that sum over the workers.
import fs from 'node:fs';

const args = process.argv.slice(2);
const count = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 20;
if (args.length === 0) {
  console.error('usage: node scripts/slowest-tests.mjs [count] <timings.tsv> [more.tsv …]');
  process.exit(2);
}
const files = new Map(); // the last line of a file wins: a file run twice counts once
const comments = [];
for (const arg of args) {
  for (const line of fs.readFileSync(arg, 'utf8').split('\n')) {
    if (line.startsWith('#')) comments.push(line);
    else if (line.trim()) {
      const [seconds, passed, failed, name] = line.split('\t');
      files.set(name, { name, seconds: Number(seconds), passed: Number(passed), failed: Number(failed) });
    }
  }
}
const ranked = [...files.values()].sort((a, b) => b.seconds - a.seconds);
const sum = (key) => ranked.reduce((total, f) => total + f[key], 0);
for (const c of comments) console.log(c);
for (const f of ranked.slice(0, count))
  console.log(
    `${f.seconds.toFixed(1).padStart(7)} s  ${String(f.passed + f.failed).padStart(4)} tests  ${f.name}${f.failed ? ` (${f.failed} failed)` : ''}`,
  );
console.log(
  `${ranked.length} files, ${sum('passed')} passed, ${sum('failed')} failed: ${sum('seconds').toFixed(1)} s summed over files`,
);
