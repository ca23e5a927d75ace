// COOKIES_FILE: a Netscape cookies.txt (what browser extensions export and yt-dlp's --cookies reads),
// held in a tough-cookie jar so each request gets only the cookies RFC 6265 sends it (domain and
// host-only, path, Secure only over https, never an expired one). The jar is read-only to requests:
// a Set-Cookie one client's request provoked must not ride along on another client's, so the file is
// the only source, read again when it changes (checked at most once a second, on use). yt-dlp gets a
// private copy per run, because it writes its cookies back to the file it was given. Cookie values
// are never logged: messages name the file and a line number at most.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cookie, CookieJar, MemoryCookieStore } from 'tough-cookie';

/** Reads one cookies.txt into cookies, leaving out the expired; `bad` counts lines it could not use. */
export function parseNetscapeCookies(text: string, now = Date.now()): { cookies: Cookie[]; bad: number } {
  const cookies: Cookie[] = [];
  let bad = 0;
  for (const raw of text.split(/\r?\n/)) {
    // curl and yt-dlp mark HttpOnly cookies with this prefix on an otherwise commented-looking line.
    const httpOnly = raw.startsWith('#HttpOnly_');
    const line = httpOnly ? raw.slice('#HttpOnly_'.length) : raw;
    if (line.trim() === '' || line.startsWith('#')) continue;
    const fields = line.split('\t');
    if (fields.length < 6 || fields.length > 7) {
      bad++;
      continue;
    }
    const [domain, subdomains, cookiePath, secure, expiry, key, value = ''] = fields;
    const expires = Number(expiry);
    if (!domain || !key || !Number.isFinite(expires)) {
      bad++;
      continue;
    }
    // 0 is a session cookie: it lives as long as the file says nothing else.
    if (expires > 0 && expires * 1000 <= now) continue;
    cookies.push(
      new Cookie({
        key,
        value,
        domain: domain.replace(/^\./, '').toLowerCase(),
        // A leading dot is the older way of saying "and its subdomains".
        hostOnly: !(subdomains.toUpperCase() === 'TRUE' || domain.startsWith('.')),
        path: cookiePath || '/',
        secure: secure.toUpperCase() === 'TRUE',
        httpOnly,
        expires: expires > 0 ? new Date(expires * 1000) : 'Infinity',
      }),
    );
  }
  return { cookies, bad };
}

export interface CookieFileOptions {
  /** How often, at most, the file's stat is looked at on use (default 1 s). */
  checkMs?: number;
  /** Told when a changed file cannot be read; the cookies in use stay until it can. */
  onProblem?: (message: string) => void;
}

interface Stamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

export class CookieFile {
  private jar: CookieJar;
  private stamp: Stamp;
  private checkedAt = Date.now();
  private checking: Promise<void> | undefined;
  private readonly checkMs: number;

  /** Reads the file at once: one that cannot be read stops start-up. */
  constructor(
    readonly file: string,
    private readonly options: CookieFileOptions = {},
  ) {
    this.checkMs = options.checkMs ?? 1_000;
    try {
      this.stamp = stampOf(fs.statSync(file));
      this.jar = this.build(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`The cookies file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  }

  /** The Cookie header RFC 6265 gives this URL, or undefined when no cookie matches. */
  async header(url: URL | string): Promise<string | undefined> {
    await this.fresh();
    const value = await this.jar.getCookieString(String(url));
    return value || undefined;
  }

  /** got's cookieJar option: cookies from the file only; what origins set is not kept. */
  readonly gotJar = {
    getCookieString: async (url: string): Promise<string> => (await this.header(url)) ?? '',
    setCookie: async (): Promise<void> => {},
  };

  /** A private copy of the file for one yt-dlp run (which writes into it); remove() when it ends. */
  async privateCopy(): Promise<{ path: string; remove(): Promise<void> }> {
    await this.fresh();
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'reelay-cookies-'));
    const copy = path.join(dir, `${randomUUID()}.txt`);
    await fs.promises.copyFile(this.file, copy);
    await fs.promises.chmod(copy, 0o600);
    return { path: copy, remove: () => fs.promises.rm(dir, { recursive: true, force: true }) };
  }

  private build(text: string): CookieJar {
    const { cookies, bad } = parseNetscapeCookies(text);
    if (bad > 0)
      this.options.onProblem?.(`${bad} line(s) of ${this.file} are not Netscape cookies.txt lines and were left out`);
    // allowSecureOnLocal off: a Secure cookie goes over https only, localhost included.
    const jar = new CookieJar(new MemoryCookieStore(), { allowSecureOnLocal: false });
    for (const cookie of cookies) jar.store.putCookie(cookie, () => {});
    return jar;
  }

  /** Reads the file again when its stat changed since it was last read. */
  private async fresh(): Promise<void> {
    if (Date.now() - this.checkedAt < this.checkMs) return;
    this.checking ??= this.reload().finally(() => {
      this.checkedAt = Date.now();
      this.checking = undefined;
    });
    await this.checking;
  }

  private async reload(): Promise<void> {
    try {
      const stat = await fs.promises.stat(this.file);
      const stamp = stampOf(stat);
      if (stamp.mtimeMs === this.stamp.mtimeMs && stamp.size === this.stamp.size && stamp.ino === this.stamp.ino)
        return;
      this.jar = this.build(await fs.promises.readFile(this.file, 'utf8'));
      this.stamp = stamp;
    } catch (err) {
      this.options.onProblem?.(
        `${this.file} could not be read again (${(err as NodeJS.ErrnoException).code ?? 'error'}); the cookies read before stay in use`,
      );
    }
  }
}

function stampOf(stat: fs.Stats): Stamp {
  return { mtimeMs: stat.mtimeMs, size: stat.size, ino: stat.ino };
}
