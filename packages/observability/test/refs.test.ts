// A job id in a log line is written as its reference: the same for the same id, and not the id.
import { createHash } from 'node:crypto';
import { expect, test } from '@jest/globals';
import { logRef, withRef } from '../src/refs.js';

const id = 'kq3T9vQ2rS8uX1yZ4aB6cD';

test('a reference is the first 16 hex digits of the SHA-256, so an operator can find a job by its id', () => {
  expect(logRef(id)).toBe(createHash('sha256').update(id).digest('hex').slice(0, 16));
  expect(logRef(id)).not.toContain(id);
});

test("an error's message and stack, and nested text such as ffmpeg's stderr, name the job by reference", () => {
  const err = Object.assign(new Error(`ENOENT: no such file, open '/data/tmp/${id}-1/output.part'`), {
    path: `/data/tmp/${id}-1/output.part`,
  });
  const logged = JSON.stringify([withRef(err, id), withRef({ cause: { stderr: `/tmp/${id}/x: failed` } }, id)]);
  expect(logged).not.toContain(id);
  expect(logged).toContain(`/data/tmp/${logRef(id)}-1/output.part`);
  expect(logged).toContain('ENOENT');
  expect(withRef(undefined, id)).toBeUndefined();
});
