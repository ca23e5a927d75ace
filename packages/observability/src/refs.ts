// How a log line names a capability (a job id, which fetches the job's file): by a reference that
// cannot be turned back into it. An operator who is given a job id finds its lines by computing
// the same reference (`logRef(id)`: the first 16 hex digits of the id's SHA-256).
import { createHash } from 'node:crypto';

export function logRef(capability: string): string {
  return createHash('sha256').update(capability).digest('hex').slice(0, 16);
}

/**
 * A value to log (an error, a child process's stderr) with every occurrence of `capability` written
 * as its reference: paths of a job's files and messages about it name the job by its id.
 */
export function withRef(value: unknown, capability: string): unknown {
  const plain =
    value instanceof Error
      ? {
          type: value.name,
          message: value.message,
          stack: value.stack,
          ...(value as unknown as Record<string, unknown>),
        }
      : value;
  const text = JSON.stringify(plain);
  return text === undefined ? value : JSON.parse(text.replaceAll(capability, logRef(capability)));
}
