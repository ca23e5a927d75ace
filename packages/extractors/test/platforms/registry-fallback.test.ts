// The registry's NotMyUrl mechanism: an extractor that claimed a URL by its shape may decline it
// after asking the host, and the registry carries on with the next extractor.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { startOrigin, type Origin } from '@reelay/testkit';
import { ExtractorRegistry, GENERIC_EXTRACTORS, NotMyUrl, type UrlExtractor } from '../../src/index.js';

let origin: Origin;
const egress = new Egress({ allowlist: ['127.0.0.1'] });
const asked: string[] = [];

function fake(name: string, behaviour: 'decline' | 'fail' | 'answer'): UrlExtractor {
  return {
    name,
    platform: name,
    patterns: [/\/any\//],
    kinds: ['video'],
    matches: (url) => url.pathname.startsWith('/any/'),
    async extract(url) {
      asked.push(name);
      if (behaviour === 'decline') throw new NotMyUrl(name, 'the host is not one of mine');
      if (behaviour === 'fail') throw new ReelayError('content_not_found', `${name} found nothing`);
      return {
        url: url.href,
        platform: name,
        extract_profile: `${name}_api`,
        media: [{ type: 'video', sources: [{ url: `${url.href}.mp4`, stream_profile: 'muxed_progressive' }] }],
      };
    },
  };
}

beforeAll(async () => {
  origin = await startOrigin();
  origin.body(
    '/any/page',
    '<html><head><title>Generic</title></head><body><video src="/clip.mp4"></video></body></html>',
    'text/html',
  );
});

afterAll(async () => {
  await origin.close();
});

describe('an extractor declining a URL (NotMyUrl)', () => {
  test('the next platform that matches is asked', async () => {
    asked.length = 0;
    const registry = new ExtractorRegistry([fake('first', 'decline'), fake('second', 'answer')], GENERIC_EXTRACTORS);
    const { result } = await registry.extract(new URL(origin.url('/any/page')), { egress, endpoints: {} });
    expect(result.platform).toBe('second');
    expect(asked).toEqual(['first', 'second']);
  });

  test('with no other platform the generic extractors read the URL', async () => {
    const registry = new ExtractorRegistry([fake('first', 'decline')], GENERIC_EXTRACTORS);
    const { result } = await registry.extract(new URL(origin.url('/any/page')), { egress, endpoints: {} });
    expect(result).toMatchObject({ platform: 'generic', title: 'Generic' });
  });

  test('any other error is the answer: no further extractor is asked', async () => {
    asked.length = 0;
    const registry = new ExtractorRegistry([fake('first', 'fail'), fake('second', 'answer')], GENERIC_EXTRACTORS);
    await expect(registry.extract(new URL(origin.url('/any/page')), { egress, endpoints: {} })).rejects.toMatchObject({
      code: 'content_not_found',
    });
    expect(asked).toEqual(['first']);
  });
});
