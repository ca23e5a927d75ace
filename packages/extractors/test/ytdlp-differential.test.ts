// Agreement with yt-dlp's parsers: every case of corpus/ goes through reelay's HLS, DASH, HTML5
// and JSON-LD parsers and through yt-dlp's (_parse_m3u8_formats_and_subtitles,
// _parse_mpd_formats_and_subtitles, _parse_html5_media_entries, _search_json_ld, one python process
// for the whole corpus). Any disagreement must be listed in corpus/differences.json with its reason,
// and every listed difference must still occur.
import { beforeAll, describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import {
  CORPUS_DIR,
  compare,
  hasYtdlp,
  PYTHON,
  readCases,
  readDifferences,
  runYtdlp,
  type Disagreement,
  type YtResult,
} from './differential.js';

const cases = readCases();
const differences = readDifferences();
const available = hasYtdlp();
if (!available && process.env.CI)
  throw new Error(`${PYTHON} cannot import yt_dlp: CI must install Debian's yt-dlp (see .ci/run)`);
if (!available) console.warn(`ytdlp-differential: skipped, ${PYTHON} cannot import yt_dlp (apt-get install yt-dlp)`);
const describeDiff = available ? describe : describe.skip;

const listed = (id: string, d: Disagreement): boolean =>
  differences.some((e) => e.fields.includes(d.field) && e.cases.includes(id));
const show = (d: Disagreement): string =>
  `${d.field}${d.url ? ` ${d.url}` : ''}: reelay ${JSON.stringify(d.reelay)}, yt-dlp ${JSON.stringify(d.ytdlp)}`;

describe('the differential corpus', () => {
  test('holds at least 60 cases, every file indexed once with a description', () => {
    const files = ['hls', 'dash', 'html5', 'jsonld'].flatMap((dir) =>
      fs.readdirSync(path.join(CORPUS_DIR, dir)).map((f) => `${dir}/${f}`),
    );
    expect(cases.length).toBeGreaterThanOrEqual(60);
    expect(cases.map((c) => c.file).sort()).toEqual(files.sort());
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    for (const c of cases)
      expect({ id: c.id, described: c.about.length > 10, kind: c.file.startsWith(`${c.kind}/`) }).toEqual({
        id: c.id,
        described: true,
        kind: true,
      });
  });

  test('lists each deliberate difference with a reason and only for cases that exist', () => {
    const ids = new Set(cases.map((c) => c.id));
    for (const d of differences) {
      expect(d.reason.length).toBeGreaterThan(20);
      expect(d.cases.filter((id) => !ids.has(id))).toEqual([]);
    }
  });
});

describe('the comparison itself (no yt-dlp needed)', () => {
  const byId = (id: string) => cases.find((c) => c.id === id)!;
  const base = 'https://media.example.com/vod/show/';

  test('reports a changed field, a bitrate off by more than 1 kbit/s (not one within), URLs only one side lists, and subtitles', () => {
    const result: YtResult = {
      formats: [
        { url: 'out_0.m3u8', width: 640, height: 480, tbr: 1108, vcodec: 'avc1.64001e', acodec: 'mp4a.40.2' },
        { url: 'https://elsewhere.example/out_1.m3u8', width: 1280, height: 720, tbr: 3105.6 },
      ],
      subtitles: { en: [`${base}en.vtt`] },
    };
    expect(compare(byId('hls-ffmpeg-muxed'), result).map((d) => [d.field, d.url, d.reelay, d.ytdlp])).toEqual([
      ['missing', 'https://elsewhere.example/out_1.m3u8', undefined, expect.objectContaining({ height: 720 })],
      ['height', `${base}out_0.m3u8`, 360, 480],
      ['kbps', `${base}out_0.m3u8`, 1105.6, 1108],
      ['extra', `${base}out_1.m3u8`, expect.objectContaining({ height: 720 }), undefined],
      ['subtitles', undefined, {}, { en: [`${base}en.vtt`] }],
    ]);
    const close: YtResult = {
      formats: [
        { url: 'out_0.m3u8', width: 640, height: 360, tbr: 1106.4, vcodec: 'avc1.64001e', acodec: 'mp4a.40.2' },
      ],
      subtitles: {},
    };
    expect(compare(byId('hls-ffmpeg-muxed'), close).map((d) => d.field)).toEqual(['extra']);
  });

  test("leaves out yt-dlp's DRM formats and names its segmented DASH formats as reelay does", () => {
    const mpd = `${base}manifest.mpd`;
    const segmented = { url: mpd, manifest_url: mpd, segmented: true, acodec: 'none' };
    const result: YtResult = {
      formats: [
        { ...segmented, format_id: 'hd', width: 1920, height: 1080, tbr: 5000, vcodec: 'avc1.640028', has_drm: true },
        { ...segmented, format_id: 'sd', width: 640, height: 360, tbr: 800, vcodec: 'avc1.640028' },
        { ...segmented, format_id: 'aac', tbr: 128, vcodec: 'none', acodec: 'mp4a.40.2' },
      ],
      subtitles: {},
    };
    expect(compare(byId('dash-partial-drm'), result)).toEqual([]);
  });
});

describeDiff("reelay's parsers against yt-dlp's", () => {
  let results: Record<string, YtResult>;
  beforeAll(() => {
    results = runYtdlp(cases).results;
  });

  test.each(cases.map((c) => [c.id, c] as const))(
    'on %s reelay agrees with yt-dlp but for the listed differences',
    (id, c) => {
      const unlisted = compare(c, results[id]).filter((d) => !listed(id, d));
      expect(unlisted.map(show)).toEqual([]);
    },
  );

  test('every listed difference still occurs in each of its cases', () => {
    const stale = differences.flatMap((e) =>
      e.cases.flatMap((id) => {
        const found = new Set(
          compare(
            cases.find((c) => c.id === id)!,
            results[id],
          ).map((d) => d.field),
        );
        return e.fields.filter((f) => !found.has(f)).map((f) => `${f} in ${id}`);
      }),
    );
    expect(stale).toEqual([]);
  });
});
