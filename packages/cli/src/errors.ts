// The two ways the CLI fails on purpose: a usage error (exit 2) and anything else (exit 1), each
// with a hint of what to do next.
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    /** The server's error code and status, shown after the message. */
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  override readonly name = 'UsageError';
}

/** A transfer that broke off mid-body (undici's "terminated") as a CliError; others unchanged. */
export function brokenOff(err: unknown, hint: string): unknown {
  if (err instanceof CliError || (err as Error).name === 'AbortError') return err;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return new CliError(
    `the transfer from the server broke off (${cause?.code ?? cause?.message ?? (err as Error).message}).`,
    hint,
  );
}
