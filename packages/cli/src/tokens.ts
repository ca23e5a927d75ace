// The control tokens of the jobs this user's CLI started, kept beside the part files' resume so that
// a later `reelay job ID --cancel` (or the same `reelay get` run again) is still the job's creator.
// The server shows a token once, in the 202 that started the job, and keeps only its hash. The
// file is the user's alone (0600 in a 0700 folder): $XDG_STATE_HOME/reelay/jobs.json, else
// ~/.local/state/reelay/jobs.json. Entries go after a week (no job lives that long) and past 500.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const KEEP_MS = 7 * 24 * 3600 * 1000;
const MAX_ENTRIES = 500;

interface Entry {
  server: string;
  id: string;
  token: string;
  at: number;
}

export function stateFile(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME)
      ? env.XDG_STATE_HOME
      : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'reelay', 'jobs.json');
}

function load(file: string): Entry[] {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return Array.isArray(parsed)
      ? parsed.filter(
          (e): e is Entry =>
            typeof e?.server === 'string' &&
            typeof e.id === 'string' &&
            typeof e.token === 'string' &&
            typeof e.at === 'number',
        )
      : [];
  } catch {
    return []; // none yet, or unreadable: as if empty
  }
}

export class JobTokens {
  constructor(private readonly file = stateFile()) {}

  /** The token this user was given for job `id` of `server` (an origin), if it is kept. */
  get(server: string, id: string): string | undefined {
    return load(this.file).find((e) => e.server === server && e.id === id)?.token;
  }

  /**
   * Keeps a job's token (the newest first). Best effort: a folder that cannot be written leaves the
   * token with this run only, and a later cancel from elsewhere answers what to do.
   */
  remember(server: string, id: string, token: string): void {
    const now = Date.now();
    const entries = [
      { server, id, token, at: now },
      ...load(this.file).filter((e) => now - e.at < KEEP_MS && !(e.server === server && e.id === id)),
    ].slice(0, MAX_ENTRIES);
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      // Written aside and renamed: two runs at once never leave half a file.
      const temp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, JSON.stringify(entries), { mode: 0o600 });
      fs.renameSync(temp, this.file);
    } catch {
      /* see above */
    }
  }
}
