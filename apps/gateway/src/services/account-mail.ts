// The mails of the account routes, sent off the request path: an answer never waits for SMTP, so
// its timing cannot tell whether an address has an account. A failed send is logged without the
// recipient's token (only which mail failed and why).
import { mails, type Account, type AccountServices, type MailMessage, type Mailer } from '@reelay/accounts';
import type { Logger } from '@reelay/observability';

export class AccountMail {
  constructor(
    private readonly mailer: Mailer,
    private readonly services: AccountServices,
    private readonly publicUrl: string,
    private readonly logger: Logger,
  ) {}

  private deliver(kind: string, to: string, build: () => Promise<MailMessage | undefined>): void {
    void (async () => {
      const message = await build();
      if (message) await this.mailer.send(to, message);
    })().catch((err: unknown) =>
      this.logger.warn({ mail: kind, err: err instanceof Error ? err.message : String(err) }, 'account mail not sent'),
    );
  }

  /** A new verification link for the account's address. */
  verification(account: Account): void {
    this.deliver('verify', account.email, async () =>
      mails.verify(
        this.publicUrl,
        await this.services.tokens.issue('verify', { account_id: account.id, email: account.email }),
      ),
    );
  }

  /** A reset link, only when the address has an account; nothing at all otherwise. */
  reset(email: string): void {
    this.deliver('reset', email, async () => {
      const stored = await this.services.accounts.find(email);
      if (!stored) return undefined;
      return mails.reset(
        this.publicUrl,
        await this.services.tokens.issue('reset', { account_id: stored.id, email: stored.email }),
      );
    });
  }

  passwordChanged(email: string): void {
    this.deliver('password-changed', email, async () => mails.passwordChanged(this.publicUrl));
  }

  providerLinked(email: string, provider: string): void {
    this.deliver('provider-linked', email, async () => mails.providerLinked(this.publicUrl, provider));
  }

  close(): void {
    this.mailer.close();
  }
}
