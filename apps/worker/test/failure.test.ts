import { describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { FfmpegError } from '@reelay/media';
import { classifyFailure, IncompleteOutputError, OutputError, StorageError } from '../src/failure.js';

const ctx = { timeoutSeconds: 900, maxBytes: 2 * 1024 ** 3 };
const failed = (stderr: string) => new FfmpegError('failed', 'ffmpeg exited with code 1', 1, stderr);

describe('what the proxy saw decides the code', () => {
  test('a blocked address wins over everything and is not retried', () => {
    expect(
      classifyFailure(
        failed('x'),
        { blocked: 'Fetching 127.0.0.2 is not allowed: it is a loopback address.', notFound: 404 },
        ctx,
      ),
    ).toEqual({
      code: 'url_blocked',
      message: 'Fetching 127.0.0.2 is not allowed: it is a loopback address.',
      retry: false,
    });
  });

  test('a 404 is content_not_found and not retried', () => {
    expect(classifyFailure(failed('Server returned 404 Not Found'), { notFound: 404 }, ctx)).toMatchObject({
      code: 'content_not_found',
      retry: false,
    });
  });

  test('a 503 or a reset is an upstream_error worth retrying', () => {
    const unavailable = new ReelayError('upstream_error', 'The origin failed with HTTP 503.');
    expect(classifyFailure(failed('x'), { unavailable }, ctx)).toEqual({
      code: 'upstream_error',
      message: 'The origin failed with HTTP 503.',
      retry: true,
    });
  });

  test('a 403 is an upstream_error not worth retrying', () => {
    expect(classifyFailure(failed('x'), { refused: 403 }, ctx)).toMatchObject({ code: 'upstream_error', retry: false });
  });

  test('a job cut off at the byte limit says so', () => {
    expect(classifyFailure(new FfmpegError('aborted', 'aborted', undefined, ''), { tooLarge: true }, ctx)).toEqual({
      code: 'upstream_error',
      message: 'The media is larger than the limit of 2 GiB.',
      retry: false,
    });
  });
});

describe('ffmpeg on its own', () => {
  test('a timeout is job_timeout, not retried', () => {
    expect(classifyFailure(new FfmpegError('timeout', 't', undefined, ''), {}, ctx)).toEqual({
      code: 'job_timeout',
      message: 'The job ran longer than its limit of 900 seconds.',
      retry: false,
    });
  });

  test('a protocol refused by the whitelist is url_blocked', () => {
    expect(classifyFailure(failed("[hls @ 0x1] Protocol 'file' not on whitelist 'http,tcp'!"), {}, ctx)).toMatchObject({
      code: 'url_blocked',
      retry: false,
    });
  });

  test('other failures get a short message with no local path', () => {
    const result = classifyFailure(
      failed('file:/data/tmp/AAAA-x/output.part: Invalid data found when processing input'),
      {},
      ctx,
    );
    expect(result).toEqual({
      code: 'upstream_error',
      message: 'The origin sent data that is not readable media.',
      retry: false,
    });
    expect(classifyFailure(failed('something odd at /data/tmp/x'), {}, ctx).message).not.toContain('/data');
  });

  test('an empty output is an upstream_error', () => {
    expect(classifyFailure(new OutputError('ffmpeg produced an empty file.'), {}, ctx)).toMatchObject({
      code: 'upstream_error',
      retry: false,
    });
  });
});

test('a planning error keeps its code', () => {
  expect(
    classifyFailure(new ReelayError('invalid_request', 'Converting a single file needs a format.'), {}, ctx),
  ).toEqual({
    code: 'invalid_request',
    message: 'Converting a single file needs a format.',
    retry: false,
  });
});

test('anything else is an internal_error that another attempt may pass', () => {
  expect(classifyFailure(new Error('ENOSPC'), {}, ctx)).toEqual({
    code: 'internal_error',
    message: 'The job failed because of an internal error.',
    retry: true,
  });
});

describe('local faults', () => {
  test('a full disk is storage_error, retried because space may come back', () => {
    expect(classifyFailure(new StorageError('ENOSPC', 'artifacts'), { notFound: 404 }, ctx)).toEqual({
      code: 'storage_error',
      message: 'The result could not be stored: the artifact store is full.',
      retry: true,
    });
  });

  test('a read-only or unusable folder is storage_error, not retried', () => {
    expect(classifyFailure(new StorageError('EROFS', 'temp'), {}, ctx)).toEqual({
      code: 'storage_error',
      message: "The result could not be stored: the worker's temporary folder is read-only.",
      retry: false,
    });
    expect(classifyFailure(new StorageError('ENOTDIR', 'artifacts'), {}, ctx)).toMatchObject({
      code: 'storage_error',
      retry: false,
    });
  });

  test("ffmpeg's own write failing for lack of space is storage_error, not a media problem", () => {
    expect(
      classifyFailure(failed('Error writing trailer of output.part: No space left on device'), {}, ctx),
    ).toMatchObject({ code: 'storage_error', retry: true });
  });

  test('an ffmpeg that cannot be started is a worker fault another worker may not have', () => {
    const cause = Object.assign(new Error('spawn /nonexistent ENOENT'), { code: 'ENOENT' });
    expect(
      classifyFailure(
        new FfmpegError('failed', 'ffmpeg failed: spawn /nonexistent ENOENT', undefined, '', { cause }),
        {},
        ctx,
      ),
    ).toEqual({
      code: 'internal_error',
      message: 'ffmpeg could not be started on the worker.',
      retry: true,
    });
  });
});

describe('a finished file that fails its check', () => {
  test('the 404 the proxy saw is the explanation', () => {
    expect(classifyFailure(new IncompleteOutputError(['the audio track is missing']), { notFound: 404 }, ctx)).toEqual({
      code: 'content_not_found',
      message:
        'The origin answered 404 for part of the media. The finished file is incomplete: the audio track is missing.',
      retry: false,
    });
  });

  test('without an upstream failure it is an upstream_error not worth retrying', () => {
    expect(classifyFailure(new IncompleteOutputError(['it lasts 1.0 s of the expected 8.0 s']), {}, ctx)).toEqual({
      code: 'upstream_error',
      message: 'The finished file is incomplete: it lasts 1.0 s of the expected 8.0 s.',
      retry: false,
    });
  });
});
