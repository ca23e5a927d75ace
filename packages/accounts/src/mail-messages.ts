// The account mails as plain data: subject, a text part and an HTML part, built by pure functions so
// tests can read them and a later i18n task can swap the strings. Every word of them is here. Links
// are built from PUBLIC_URL and carry their token in the fragment (`#verify=…`), which browsers never
// send to a server, so a token does not reach access logs, proxies or Referer headers.

export interface MailMessage {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The web page where a mailed link lands; it reads the token from the fragment and posts it. */
export function accountLink(publicUrl: string, fragment: Record<string, string>): string {
  return `${publicUrl}/settings/api-keys#${new URLSearchParams(fragment).toString()}`;
}

function message(subject: string, paragraphs: string[], action?: { label: string; url: string }): MailMessage {
  const text =
    [
      ...paragraphs.slice(0, 1),
      ...(action ? [`${action.label}:\n${action.url}`] : []),
      ...paragraphs.slice(1),
      '— reelay',
    ].join('\n\n') + '\n';
  const body = [
    ...paragraphs.slice(0, 1).map((p) => `<p>${escapeHtml(p)}</p>`),
    ...(action
      ? [
          `<p><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a></p>`,
          `<p style="color:#555;font-size:90%">${escapeHtml(action.url)}</p>`,
        ]
      : []),
    ...paragraphs.slice(1).map((p) => `<p>${escapeHtml(p)}</p>`),
    '<p>— reelay</p>',
  ].join('\n');
  const html = `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>\n<body style="font-family:sans-serif;line-height:1.5;max-width:36em">\n${body}\n</body></html>\n`;
  return { subject, text, html };
}

export const mails = {
  verify: (publicUrl: string, token: string): MailMessage =>
    message(
      'Confirm your e-mail address for reelay',
      [
        'Someone (hopefully you) made a reelay account with this address. Open the link to confirm it; it works for 24 hours, once.',
        'If it was not you, do not open the link: confirming would make the password someone else chose a way into an account under your address. Ignore this mail (the account cannot make API keys, and no sign-in service joins it, until the address is confirmed), or make the account yours with "Forgot your password?" on the sign-in page.',
      ],
      { label: 'Confirm my address', url: accountLink(publicUrl, { verify: token }) },
    ),
  reset: (publicUrl: string, token: string): MailMessage =>
    message(
      'Reset your reelay password',
      [
        'Someone asked to reset the password of the reelay account with this address. Open the link to choose a new one; it works for 1 hour, once, and signs you out everywhere.',
        'If it was not you, ignore this mail: your password stays as it is.',
      ],
      { label: 'Choose a new password', url: accountLink(publicUrl, { reset: token }) },
    ),
  passwordChanged: (publicUrl: string): MailMessage =>
    message('Your reelay password was changed', [
      'The password of your reelay account was just changed, and other devices were signed out.',
      `If it was not you, reset your password at once: ${publicUrl}/settings/api-keys`,
    ]),
  providerLinked: (publicUrl: string, provider: string): MailMessage =>
    message(`${provider} sign-in was linked to your reelay account`, [
      `Your reelay account can now be signed in to with ${provider}.`,
      `If it was not you, unlink it in the settings and change your password: ${publicUrl}/settings/api-keys`,
    ]),
};
