// Author, upload date and description on extract items: from JSON-LD, OpenGraph and meta tags of a
// page, from yt-dlp's info, and kept in the source records that a job's tags come from.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import { startOrigin, type Origin } from '@reelay/testkit';
import { createRegistry, type Extraction } from '../src/index.js';
import { buildResult, toUploadDate } from '../src/result.js';
import { mapYtdlpInfo } from '../src/ytdlp-map.js';

let origin: Origin;
const egress = new Egress({ allowlist: ['127.0.0.1'] });
const registry = createRegistry();
let pages = 0;

beforeAll(async () => {
  origin = await startOrigin();
});
afterAll(() => origin.close());

async function extract(html: string): Promise<Extraction> {
  const path = `/describing/${++pages}`;
  origin.body(path, html, 'text/html; charset=utf-8');
  return registry.extract(new URL(origin.url(path)), { egress, endpoints: {} });
}

describe('upload dates', () => {
  test.each([
    ['2024-05-06', '2024-05-06'],
    ['2024-05-06T23:59:59-07:00', '2024-05-06'], // the day as the page wrote it
    ['20240506', '2024-05-06'], // yt-dlp
    [1717236000, '2024-06-01'], // Unix seconds
    ['2024-02-30', undefined],
    ['May 6, 2024', undefined],
    ['', undefined],
    [-5, undefined],
    [Number.POSITIVE_INFINITY, undefined],
  ] as const)('%j is %j', (value, expected) => {
    expect(toUploadDate(value)).toBe(expected);
  });
});

describe('a page', () => {
  test("with a JSON-LD VideoObject gives the item its author's name, upload date and description", async () => {
    const { result, records } = await extract(`<html><head><title>t</title>
      <script type="application/ld+json">{"@context":"https://schema.org","@type":"VideoObject","name":"Harbour at dusk",
        "contentUrl":"/media/dusk.mp4","encodingFormat":"video/mp4","thumbnailUrl":"/media/dusk.jpg",
        "author":[{"@type":"Person","name":"Ada Lovelace","url":"https://example.com/ada"}],"uploadDate":"2024-05-06T10:00:00Z",
        "description":"  The harbour,\\n at dusk.  "}</script></head><body></body></html>`);
    expect(result.media[0]).toMatchObject({
      author: 'Ada Lovelace',
      upload_date: '2024-05-06',
      description: 'The harbour, at dusk.',
    });
    expect(records[0]).toMatchObject({
      author: 'Ada Lovelace',
      upload_date: '2024-05-06',
      thumbnail: origin.url('/media/dusk.jpg'),
      page_url: expect.stringContaining('/describing/'),
    });
  });

  test('with only OpenGraph and meta tags takes og:description, the author meta and the publication time', async () => {
    const { result } = await extract(`<html><head>
      <meta property="og:title" content="Clip"><meta property="og:video" content="/media/clip.mp4"><meta property="og:video:type" content="video/mp4">
      <meta property="og:description" content="What the clip shows"><meta name="description" content="a shorter text">
      <meta property="article:author" content="https://example.com/profile/ada"><meta name="author" content="Ada">
      <meta property="article:published_time" content="2023-12-31T22:00:00+01:00">
      </head><body></body></html>`);
    expect(result.media[0]).toMatchObject({
      author: 'Ada',
      upload_date: '2023-12-31',
      description: 'What the clip shows',
    });
  });

  test('without any of them gives none, and a profile URL is not an author', async () => {
    const { result } =
      await extract(`<html><head><meta property="og:video" content="/media/clip.mp4"><meta property="og:video:type" content="video/mp4">
      <meta property="article:author" content="https://example.com/profile/ada"></head><body></body></html>`);
    expect(result.media[0]).not.toHaveProperty('author');
    expect(result.media[0]).not.toHaveProperty('upload_date');
    expect(result.media[0]).not.toHaveProperty('description');
  });
});

describe('yt-dlp info', () => {
  test('gives the uploader, upload_date and description', () => {
    const info = {
      id: 'x',
      title: 'A talk',
      uploader: 'Conference TV',
      upload_date: '20240506',
      description: 'Recorded live.',
      formats: [
        {
          format_id: '18',
          url: 'http://media.example.com/v.mp4',
          ext: 'mp4',
          vcodec: 'avc1.42001E',
          acodec: 'mp4a.40.2',
          width: 640,
          height: 360,
        },
      ],
    };
    const { result, records } = buildResult(mapYtdlpInfo(new URL('http://media.example.com/watch'), info));
    expect(result.media[0]).toMatchObject({
      author: 'Conference TV',
      upload_date: '2024-05-06',
      description: 'Recorded live.',
    });
    expect(records[0]).toMatchObject({
      author: 'Conference TV',
      upload_date: '2024-05-06',
      page_url: 'http://media.example.com/watch',
    });
  });
});
