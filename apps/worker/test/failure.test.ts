import { describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { FfmpegError } from '@reelay/media';
import { classifyFailure, OutputError } from '../src/failure.js';

const ctx = { timeoutSeconds: 900, maxBytes: 2 * 1024 ** 3 };
const failed = (stderr: string) => new FfmpegError('failed', 'ffmpeg exited with code 1', 1, stderr);

describe('what the proxy saw decides the code', () => {
  test('a blocked address wins over everything and is not retried', () => {
    expect(classifyFailure(failed('x'), { blocked: 'Fetching 127.0.0.2 is not allowed: it is a loopback address.', notFound: 404 }, ctx)).toEqual({
      code: 'url_blocked', message: 'Fetching 127.0.0.2 is not allowed: it is a loopback address.', retry: false,
    });
  });

  test('a 404 is content_not_found and not retried', () => {
    expect(classifyFailure(failed('Server returned 404 Not Found'), { notFound: 404 }, ctx)).toMatchObject({ code: 'content_not_found', retry: false });
  });

  test('a 503 or a reset is an upstream_error worth retrying', () => {
    const unavailable = new ReelayError('upstream_error', 'The origin failed with HTTP 503.');
    expect(classifyFailure(failed('x'), { unavailable }, ctx)).toEqual({ code: 'upstream_error', message: 'The origin failed with HTTP 503.', retry: true });
  });

  test('a 403 is an upstream_error not worth retrying', () => {
    expect(classifyFailure(failed('x'), { refused: 403 }, ctx)).toMatchObject({ code: 'upstream_error', retry: false });
  });

  test('a job cut off at the byte limit says so', () => {
    expect(classifyFailure(new FfmpegError('aborted', 'aborted', undefined, ''), { tooLarge: true }, ctx)).toEqual({
      code: 'upstream_error', message: 'The media is larger than the limit of 2 GiB.', retry: false,
    });
  });
});

describe('ffmpeg on its own', () => {
  test('a timeout is job_timeout, not retried', () => {
    expect(classifyFailure(new FfmpegError('timeout', 't', undefined, ''), {}, ctx)).toEqual({
      code: 'job_timeout', message: 'The job ran longer than its limit of 900 seconds.', retry: false,
    });
  });

  test('a protocol refused by the whitelist is url_blocked', () => {
    expect(classifyFailure(failed("[hls @ 0x1] Protocol 'file' not on whitelist 'http,tcp'!"), {}, ctx)).toMatchObject({ code: 'url_blocked', retry: false });
  });

  test('other failures get a short message with no local path', () => {
    const result = classifyFailure(failed('file:/data/tmp/AAAA-x/output.part: Invalid data found when processing input'), {}, ctx);
    expect(result).toEqual({ code: 'upstream_error', message: 'The origin sent data that is not readable media.', retry: false });
    expect(classifyFailure(failed('something odd at /data/tmp/x'), {}, ctx).message).not.toContain('/data');
  });

  test('an empty output is an upstream_error', () => {
    expect(classifyFailure(new OutputError('ffmpeg produced an empty file.'), {}, ctx)).toMatchObject({ code: 'upstream_error', retry: false });
  });
});

test('a planning error keeps its code', () => {
  expect(classifyFailure(new ReelayError('invalid_request', 'Converting a single file needs a format.'), {}, ctx)).toEqual({
    code: 'invalid_request', message: 'Converting a single file needs a format.', retry: false,
  });
});

test('anything else is an internal_error that another attempt may pass', () => {
  expect(classifyFailure(new Error('ENOSPC'), {}, ctx)).toEqual({ code: 'internal_error', message: 'The job failed because of an internal error.', retry: true });
});
