// The gateway's /healthz says which ffmpeg and ffprobe this host resolves and where each came from
// (FFMPEG_PATH / ffmpeg-static / PATH), so an operator sees the choice without shelling in.
import fs from 'node:fs';
import { expect, test } from '@jest/globals';
import request from 'supertest';
import { installedProbe } from '@reelay/media';
import { buildGateway } from './helpers.js';

test('with FFMPEG_PATH and FFPROBE_PATH set, /healthz names those paths and the settings they came from', async () => {
  const gw = await buildGateway({
    env: { FFMPEG_PATH: '/opt/ffmpeg/bin/ffmpeg', FFPROBE_PATH: '/opt/ffmpeg/bin/ffprobe' },
  });
  try {
    const res = await request(gw.app).get('/healthz').expect(200);
    expect(res.body).toEqual({
      status: 'ok',
      ffmpeg: { path: '/opt/ffmpeg/bin/ffmpeg', source: 'FFMPEG_PATH' },
      ffprobe: { path: '/opt/ffmpeg/bin/ffprobe', source: 'FFPROBE_PATH' },
    });
  } finally {
    await gw.close();
  }
});

test('without them, /healthz shows ffmpeg-static where its download worked, else the PATH lookup', async () => {
  const gw = await buildGateway();
  try {
    const res = await request(gw.app).get('/healthz').expect(200);
    const bundled = installedProbe.ffmpegStatic();
    // On a machine without internet (this one) its install could not download the binary.
    const ffmpeg =
      bundled && fs.existsSync(bundled)
        ? { path: bundled, source: 'ffmpeg-static' }
        : { path: 'ffmpeg', source: 'PATH' };
    expect(res.body).toEqual({ status: 'ok', ffmpeg, ffprobe: { path: 'ffprobe', source: 'PATH' } });
  } finally {
    await gw.close();
  }
});
