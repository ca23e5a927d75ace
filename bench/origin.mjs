// Benchmark origin, run in its own process: an OpenGraph page at /og/* and an HLS master at /hls/*,
// any path (so every request can use a new URL and nothing is cached).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const port = Number(process.argv[2] ?? 0);
const filesDir = process.argv[3];

const page = (id) => `<!doctype html>
<html><head>
<meta charset="utf-8">
<title>Benchmark clip ${id}</title>
<meta property="og:title" content="Benchmark clip ${id}">
<meta property="og:type" content="video.other">
<meta property="og:image" content="https://cdn.bench.test/thumbs/${id}.jpg">
<meta property="og:video" content="https://cdn.bench.test/videos/${id}/720.mp4">
<meta property="og:video:secure_url" content="https://cdn.bench.test/videos/${id}/720.mp4">
<meta property="og:video:type" content="video/mp4">
<meta property="og:video:width" content="1280">
<meta property="og:video:height" content="720">
<link rel="stylesheet" href="/style.css">
</head><body>
<header><nav><a href="/">home</a> <a href="/about">about</a></nav></header>
<main><article><h1>Benchmark clip ${id}</h1>
${'<p>Some text of an ordinary article page, long enough to look like a real page body.</p>\n'.repeat(40)}
</article></main>
<footer>footer</footer>
</body></html>`;

const master = `#EXTM3U
#EXT-X-VERSION:6
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="audio/en.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=5000000,AVERAGE-BANDWIDTH=4500000,RESOLUTION=1920x1080,FRAME-RATE=30,CODECS="avc1.640028,mp4a.40.2",AUDIO="aud"
1080/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=2800000,AVERAGE-BANDWIDTH=2500000,RESOLUTION=1280x720,FRAME-RATE=30,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aud"
720/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=1400000,AVERAGE-BANDWIDTH=1200000,RESOLUTION=854x480,FRAME-RATE=30,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aud"
480/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=800000,AVERAGE-BANDWIDTH=700000,RESOLUTION=640x360,FRAME-RATE=30,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aud"
360/index.m3u8
`;

const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  if (url.startsWith('/og/')) {
    const body = page(url.slice(4));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    return void res.end(body);
  }
  if (url.startsWith('/hls/')) {
    res.writeHead(200, {
      'content-type': 'application/vnd.apple.mpegurl',
      'content-length': Buffer.byteLength(master),
    });
    return void res.end(master);
  }
  if (filesDir && url.startsWith('/files/')) {
    const file = path.join(filesDir, path.basename(url));
    if (fs.existsSync(file)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': fs.statSync(file).size });
      return void fs.createReadStream(file).pipe(res);
    }
  }
  res.writeHead(404).end();
});
server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
