// Sends the account mails over SMTP_URL with nodemailer. One transport per process (pooled
// connections); nodemailer's own logging stays off, so no message (and no token in it) is logged.
// Tests send through a real SMTP server they start.
import nodemailer, { type Transporter } from 'nodemailer';
import type { MailMessage } from './mail-messages.js';

export interface MailSettings {
  smtpUrl: string;
  from: string;
  /** Seconds to wait for the server at each step. */
  timeoutSeconds?: number;
}

export class Mailer {
  private readonly transport: Transporter;

  constructor(private readonly settings: MailSettings) {
    const timeout = (settings.timeoutSeconds ?? 20) * 1000;
    this.transport = nodemailer.createTransport({
      url: settings.smtpUrl,
      pool: true,
      maxConnections: 2,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      logger: false,
      debug: false,
    });
  }

  async send(to: string, mail: MailMessage): Promise<void> {
    await this.transport.sendMail({
      from: this.settings.from,
      to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    });
  }

  close(): void {
    this.transport.close();
  }
}
