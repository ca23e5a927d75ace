// No module imports itself back, type-only imports included. ESLint's import-x/no-cycle (on for the
// whole repository) skips `import type`, which is how decode.ts ↔ egress.ts and proxy-ahead.ts ↔
// proxy-session.ts ↔ proxy-types.ts lived unseen; this reads every relative import and re-export
// with TypeScript's own pre-processor and looks for strongly connected modules.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import ts from 'typescript';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Module → the modules it names (relative imports, `import type` and `export … from` included). */
function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const named = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
    const local = named
      .filter((name) => name.startsWith('.'))
      .map((name) => path.posix.join(path.posix.dirname(file), name.replace(/\.js$/, '.ts')))
      .filter((target) => sources.has(target));
    graph.set(file, [...new Set(local)]);
  }
  return graph;
}

/** The import circles: strongly connected sets of more than one module, or a module naming itself. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm; a few dozen modules per package, so recursion depth is no concern.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** Every .ts source under a folder, keyed by its path relative to that folder (posix). */
function sourcesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (sub: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.posix.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
        out.set(rel, fs.readFileSync(path.join(dir, rel), 'utf8'));
    }
  };
  walk('.');
  return out;
}

/** apps/* and packages/* that have a src folder. */
function workspaceSources(): string[] {
  return ['apps', 'packages'].flatMap((group) =>
    fs
      .readdirSync(path.join(REPO, group))
      .map((name) => `${group}/${name}/src`)
      .filter((src) => fs.existsSync(path.join(REPO, src))),
  );
}

describe('import circles', () => {
  test('the finder sees a circle made only of type imports and re-exports, and nothing in a chain', () => {
    const sources = new Map([
      ['a.ts', "import type { B } from './b.js';\nexport interface A { b: B }\n"],
      ['b.ts', "export type { C } from './sub/c.js';\nexport interface B { n: number }\n"],
      ['sub/c.ts', "import type { A } from '../a.js';\nexport interface C { a: A }\n"],
      ['leaf.ts', "import { x } from 'node:fs';\nimport type { A } from './a.js';\n"],
      ['self.ts', "import type { S } from './self.js';\nexport interface S { s?: S }\n"],
    ]);
    expect(importCycles(importGraph(sources))).toEqual([['a.ts', 'b.ts', 'sub/c.ts'], ['self.ts']]);
    expect(
      importCycles(importGraph(new Map([...sources].filter(([f]) => f !== 'sub/c.ts' && f !== 'self.ts')))),
    ).toEqual([]);
  });

  test('packages/egress has none: each module depends one way (decode → response, proxy-session → proxy-ahead → proxy-deps)', () => {
    const graph = importGraph(sourcesOf(path.join(REPO, 'packages/egress/src')));
    expect(graph.get('decode.ts')).toContain('response.ts');
    expect(graph.get('decode.ts')).not.toContain('egress.ts');
    expect(graph.get('proxy-ahead.ts')).not.toContain('proxy-session.ts');
    expect(graph.get('proxy-ahead.ts')).not.toContain('proxy-types.ts');
    expect(importCycles(graph)).toEqual([]);
  });

  test('no other package or app has one either', () => {
    const found = workspaceSources().flatMap((src) =>
      importCycles(importGraph(sourcesOf(path.join(REPO, src)))).map((cycle) => `${src}: ${cycle.join(' ↔ ')}`),
    );
    expect(found).toEqual([]);
  });
});
