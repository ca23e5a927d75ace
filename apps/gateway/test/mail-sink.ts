// A real SMTP server for the account mail tests (npm smtp-server) on 127.0.0.1: it accepts every
// message and hands it to the test, decoded enough to read (quoted-printable undone).
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Delivered {
  to: string[];
  raw: string;
  /** The raw message with quoted-printable soft breaks and escapes undone. */
  decoded: string;
  subject: string;
}

export interface MailSink {
  url: string;
  delivered: Delivered[];
  /** The next message to `to` not taken yet; fails after `ms`. */
  next(to: string, ms?: number): Promise<Delivered>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export async function startMailSink(): Promise<MailSink> {
  const delivered: Delivered[] = [];
  const taken = new Set<Delivered>();
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const decoded = decodeQuotedPrintable(raw);
        const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(raw)?.[1].replace(/\r?\n[ \t]/g, ' ') ?? '';
        delivered.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, decoded, subject });
        for (const wake of waiters) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    delivered,
    async next(to, ms = 5000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = delivered.find((d) => !taken.has(d) && d.to.includes(to));
        if (found) {
          taken.add(found);
          return found;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no mail to ${to} within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, left);
          function done() {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          }
          waiters.add(done);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of a mailed link (`#verify=…` or `#reset=…`). */
export function linkToken(mail: Delivered, kind: 'verify' | 'reset'): string {
  const m = new RegExp(`#${kind}=([A-Za-z0-9_-]{43})`).exec(mail.decoded);
  if (!m) throw new Error(`no ${kind} link in:\n${mail.decoded}`);
  return m[1];
}
