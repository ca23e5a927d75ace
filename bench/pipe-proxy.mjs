// Baseline for the direct-download benchmark: the least a Node proxy can do (http.get piped to the
// response, no checks), to separate reelay's own cost from Node's copy cost on the same machine.
import http from 'node:http';

const target = process.argv[2];
const server = http.createServer((_req, res) => {
  http.get(target, (up) => {
    res.writeHead(up.statusCode ?? 502, { 'content-length': up.headers['content-length'] ?? '' });
    up.pipe(res);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
