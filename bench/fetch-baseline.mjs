// Benchmark baseline, run in its own process: the least an extract endpoint can be — Express parses
// the JSON body, one HTTP client fetches the page (keep-alive pool), and a small JSON envelope
// answers. `node bench/fetch-baseline.mjs <client>` with client got, undici or http; prints its port.
// Two more rungs show where reelay's time goes between that floor and the service: `egress` fetches
// through reelay's guarded client (address checks, host lanes, deadline, byte cap), and `extraction`
// also runs reelay's extractors on the document and answers their result — everything an extract
// does except the service around it (source records in Redis, access log, metrics, route guards).
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './lib.mjs';

const client = process.argv[2] ?? 'got';
const load = (pkgDir, file) => import(pathToFileURL(path.join(root, pkgDir, 'node_modules', file)).href);
const { default: express } = await load('apps/gateway', 'express/index.js');

let fetchPage;
/** Set for the `extraction` rung: the extractors' result instead of a fetched title. */
let extractPage;
if (client === 'got') {
  const { default: got } = await load('packages/egress', 'got/dist/source/index.js'); // egress's client, bare
  const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }) };
  fetchPage = async (url) => (await got(url, { agent, retry: { limit: 0 } })).body;
} else if (client === 'undici') {
  const { default: undici } = await load('.', 'undici/index.js'); // a root devDependency: measured, not used by reelay
  const dispatcher = new undici.Agent({ connections: 256 });
  fetchPage = async (url) => (await undici.request(url, { dispatcher })).body.text();
} else if (client === 'egress' || client === 'extraction') {
  const fromDist = (pkg) => import(pathToFileURL(path.join(root, 'packages', pkg, 'dist/index.js')).href);
  const { Egress } = await fromDist('egress');
  const egress = new Egress({ allowlist: ['127.0.0.1'] });
  fetchPage = async (url) => (await egress.fetchText(url)).text;
  if (client === 'extraction') {
    const { createRegistry } = await fromDist('extractors');
    const registry = createRegistry({});
    extractPage = async (url) =>
      (await registry.extract(new URL(url), { egress, endpoints: {}, signal: new AbortController().signal })).result;
  }
} else {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  fetchPage = (url) =>
    new Promise((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        })
        .on('error', reject);
    });
}

const app = express();
app.use(express.json());
app.post('/api/v1/extract', async (req, res) => {
  try {
    if (extractPage) return void res.json({ success: true, data: await extractPage(req.body.url) });
    const page = await fetchPage(req.body.url);
    const title = /<title>([^<]*)<\/title>/.exec(page)?.[1];
    res.json({ success: true, data: { url: req.body.url, title } });
  } catch (err) {
    res.status(502).json({ success: false, error: { code: 'upstream_error', message: String(err) } });
  }
});
const server = app.listen(0, '127.0.0.1', () => console.log(server.address().port));
