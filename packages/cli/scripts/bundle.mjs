// Bundles the built CLI (dist/main.js) and everything it imports — @reelay/contracts, zod, commander,
// … — into one ESM file, dist/reelay.js, which the packed tarball runs: @reelay/contracts is on no
// registry, so `npm install -g` of the tarball must find nothing left to download. Runs at `prepack`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outfile = path.join(root, 'dist/reelay.js');

const result = await build({
  entryPoints: [path.join(root, 'dist/main.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  metafile: true,
  logLevel: 'warning',
  // commander, cli-progress and content-disposition are CommonJS and `require` node's built-ins;
  // an ESM bundle has no `require` of its own, so it gets one.
  banner: {
    js: "import { createRequire as __reelayRequire } from 'node:module';\nconst require = __reelayRequire(import.meta.url);",
  },
});

/** The package (name, version, licence, folder) an input file of the bundle belongs to. */
function owner(file) {
  for (let dir = path.dirname(path.resolve(root, file)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (!fs.existsSync(manifest)) continue;
    const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    if (pkg.name) return { name: pkg.name, version: pkg.version, license: pkg.license, dir };
  }
  throw new Error(`no package.json above ${file}`);
}

// The bundled packages' licences travel with the bundle (MIT and ISC ask for their notice to be kept).
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const pkg = owner(input);
  if (!pkg.name.startsWith('@reelay/')) packages.set(pkg.name, pkg);
}
const notices = [...packages.values()]
  .sort((a, b) => a.name.localeCompare(b.name))
  .map((pkg) => {
    const file = fs.readdirSync(pkg.dir).find((name) => /^licen[cs]e/i.test(name));
    const text = file ? fs.readFileSync(path.join(pkg.dir, file), 'utf8').trim() : `License: ${pkg.license}`;
    return `${pkg.name}@${pkg.version} (${pkg.license})\n\n${text}\n`;
  });
fs.writeFileSync(
  path.join(root, 'dist/THIRD-PARTY-LICENSES.txt'),
  `The reelay CLI bundle (dist/reelay.js) contains these packages.\n\n${notices.join('\n---\n\n')}`,
);
fs.chmodSync(outfile, 0o755);
