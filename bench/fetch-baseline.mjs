// Benchmark baseline, run in its own process: the least an extract endpoint can be — Express parses
// the JSON body, one HTTP client fetches the page (keep-alive pool), and a small JSON envelope
// answers. `node bench/fetch-baseline.mjs <client>` with client got, undici or http; prints its port.
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './lib.mjs';

const client = process.argv[2] ?? 'got';
const load = (pkgDir, file) => import(pathToFileURL(path.join(root, pkgDir, 'node_modules', file)).href);
const { default: express } = await load('apps/gateway', 'express/index.js');

let fetchPage;
if (client === 'got') {
  const { default: got } = await load('.', 'got/dist/source/index.js'); // a root devDependency: measured, not used by reelay
  const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }) };
  fetchPage = async (url) => (await got(url, { agent, retry: { limit: 0 } })).body;
} else if (client === 'undici') {
  const { default: undici } = await load('packages/egress', 'undici/index.js');
  const dispatcher = new undici.Agent({ connections: 256 });
  fetchPage = async (url) => (await undici.request(url, { dispatcher })).body.text();
} else {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  fetchPage = (url) => new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const app = express();
app.use(express.json());
app.post('/api/v1/extract', async (req, res) => {
  try {
    const page = await fetchPage(req.body.url);
    const title = /<title>([^<]*)<\/title>/.exec(page)?.[1];
    res.json({ success: true, data: { url: req.body.url, title } });
  } catch (err) {
    res.status(502).json({ success: false, error: { code: 'upstream_error', message: String(err) } });
  }
});
const server = app.listen(0, '127.0.0.1', () => console.log(server.address().port));
