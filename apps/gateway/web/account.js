// @ts-check
// The account parts of the settings page beside the keys: social sign-in buttons, the forgotten-
// password and reset forms, mailed links (#verify=…, #reset=…: the token stays in the fragment and
// is posted once, then removed from the address bar), sign-in methods, sessions, password change,
// deletion and each key's usage chart. Words come from the settings catalog (settings:account.*).
import { ApiError, api, el, say, timeEl } from './api.js';
import { formatNumber, t } from './i18n.js';
import { usageChart } from './usage-chart.js';
import { passkeyList, passkeysSupported, signInWithPasskey } from './passkeys.js';

const byId = (id) => /** @type {any} */ (document.getElementById(id));

/** What this deployment offers (mail, passkeys, providers); nothing when it cannot say. */
async function features() {
  return api('/account/features').catch(() => ({ mail: false, passkeys: false, providers: [] }));
}

/** Reads and clears a mailed link's token from the fragment. @returns {{ kind: string, token: string } | null} */
function takeLinkToken() {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const kind of ['verify', 'reset']) {
    const token = params.get(kind);
    if (token) {
      history.replaceState(null, '', location.pathname + location.search);
      return { kind, token };
    }
  }
  return null;
}

/** The sign-in buttons of the configured providers, the forgot form, and a mailed link if any. */
export async function signedOutExtras(status) {
  const { providers, mail, passkeys } = await features();
  const box = byId('social-signin');
  const passkeyButton =
    passkeys && passkeysSupported()
      ? el(
          'button',
          {
            type: 'button',
            id: 'passkey-signin',
            onclick: async () => {
              try {
                await signInWithPasskey();
                location.reload();
              } catch (err) {
                say(status, err.message, 'error');
              }
            },
          },
          t('settings:account.signInWithPasskey'),
        )
      : null;
  box.replaceChildren(
    el('p', {}, t('settings:account.orSocial')),
    ...providers.map((p) =>
      el(
        'a',
        {
          class: 'button',
          href: `/account/oauth/${encodeURIComponent(p.id)}/start?return_to=/settings/api-keys`,
          'data-provider': p.id,
        },
        t('settings:account.signInWith', { name: p.name }),
      ),
    ),
    passkeyButton,
  );
  box.hidden = !providers.length && !passkeyButton;
  const forgot = byId('forgot-form');
  forgot.hidden = !mail;
  if (!mail) return;
  forgot.replaceChildren(
    el('h2', {}, t('settings:account.forgotTitle')),
    el('p', { class: 'hint' }, t('settings:account.forgotHint')),
    el(
      'div',
      { class: 'field' },
      el('label', { for: 'forgot-email' }, t('settings:email')),
      el('input', { id: 'forgot-email', type: 'email', required: true, autocomplete: 'email' }),
    ),
    el('p', { class: 'form-error', role: 'alert' }),
    el('button', { type: 'submit' }, t('settings:account.forgotButton')),
  );
  forgot.onsubmit = async (event) => {
    event.preventDefault();
    try {
      await api('/account/password/forgot', { method: 'POST', body: { email: byId('forgot-email').value } });
      say(status, t('settings:account.forgotSent'), 'success');
    } catch (err) {
      forgot.querySelector('.form-error').textContent = err.message;
    }
  };
}

/** Acts on a mailed link in the address: confirms the address, or shows the new-password form. */
export async function handleMailedLink(status) {
  // A social sign-in that failed sends the browser back here with the reason in the fragment.
  const returned = new URLSearchParams(location.hash.slice(1));
  if (returned.has('sign-in-error')) {
    history.replaceState(null, '', location.pathname + location.search);
    say(status, returned.get('message') || t('settings:account.signInFailed'), 'error');
    return;
  }
  const link = takeLinkToken();
  if (!link) return;
  if (link.kind === 'verify') {
    try {
      await api('/account/verify', { method: 'POST', body: { token: link.token } });
      say(status, t('settings:account.verifyDone'), 'success');
    } catch (err) {
      say(status, err.message, 'error');
    }
    return;
  }
  const form = byId('reset-form');
  form.hidden = false;
  form.replaceChildren(
    el('h2', {}, t('settings:account.resetTitle')),
    el(
      'div',
      { class: 'field' },
      el('label', { for: 'reset-password' }, t('settings:account.newPassword')),
      el('input', {
        id: 'reset-password',
        type: 'password',
        required: true,
        minlength: 10,
        autocomplete: 'new-password',
      }),
    ),
    el('p', { class: 'form-error', role: 'alert' }),
    el('button', { type: 'submit', class: 'primary' }, t('settings:account.resetButton')),
  );
  form.onsubmit = async (event) => {
    event.preventDefault();
    try {
      await api('/account/password/reset', {
        method: 'POST',
        body: { token: link.token, password: byId('reset-password').value },
      });
      form.hidden = true;
      say(status, t('settings:account.resetDone'), 'success');
    } catch (err) {
      form.querySelector('.form-error').textContent = err.message;
    }
  };
}

/** A small form built from fields; `onSubmit` gets the values by name. */
function miniForm(id, title, fields, button, onSubmit, buttonClass = '') {
  const form = el(
    'form',
    { id, class: 'mini-form', novalidate: true },
    el('h3', {}, title),
    ...fields.map((f) =>
      el(
        'div',
        { class: 'field' },
        el('label', { for: `${id}-${f.name}` }, f.label),
        el('input', {
          id: `${id}-${f.name}`,
          name: f.name,
          type: f.type ?? 'password',
          autocomplete: f.autocomplete ?? 'off',
        }),
      ),
    ),
    el('p', { class: 'form-error', role: 'alert' }),
    el('button', { type: 'submit', class: buttonClass }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(
      fields.map((f) => [f.name, /** @type {HTMLInputElement} */ (form.querySelector(`[name="${f.name}"]`)).value]),
    );
    try {
      await onSubmit(values);
      form.reset();
      form.querySelector('.form-error').textContent = '';
    } catch (err) {
      form.querySelector('.form-error').textContent = err.message;
    }
  });
  return form;
}

/** The account card of a signed-in person. `onGone` runs once the account is deleted. */
export async function accountPanel(me, status, onGone) {
  const panel = byId('account-panel');
  const [{ providers, passkeys, mail }, { sessions }] = await Promise.all([features(), api('/account/sessions')]);
  const linked = new Map((me.identities ?? []).map((i) => [i.provider, i]));
  const refresh = async () => accountPanel(await api('/account/me'), status, onGone);

  // Only a deployment that mails asks for the address to be confirmed (without SMTP keys need no
  // confirmed address, and no link was ever sent).
  const verify =
    mail && me.email_verified === false
      ? el(
          'p',
          { class: 'warning', id: 'verify-notice' },
          t('settings:account.unverified'),
          ' ',
          el(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: async () => {
                try {
                  await api('/account/verify/resend', { method: 'POST' });
                  say(status, t('settings:account.resent'), 'success');
                } catch (err) {
                  say(status, err.message, 'error');
                }
              },
            },
            t('settings:account.resend'),
          ),
        )
      : ''; // replaceChildren would write null as the text "null"

  const methods = el(
    'ul',
    { id: 'sign-in-methods' },
    el(
      'li',
      {},
      t('settings:account.passwordState', {
        state: me.has_password ? t('settings:account.passwordSet') : t('settings:account.passwordNone'),
      }),
    ),
    ...providers.map((p) => {
      const identity = linked.get(p.id);
      const action = identity
        ? el(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: async () => {
                try {
                  await api(`/account/oauth/${encodeURIComponent(p.id)}`, { method: 'DELETE' });
                  await refresh();
                } catch (err) {
                  say(status, err.message, 'error');
                }
              },
            },
            t('settings:account.unlink', { name: p.name }),
          )
        : el(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: async () => {
                const { url } = await api(`/account/oauth/${encodeURIComponent(p.id)}/link`, { method: 'POST' });
                location.assign(url);
              },
            },
            t('settings:account.link', { name: p.name }),
          );
      return el(
        'li',
        { 'data-provider': p.id },
        identity?.email ? t('settings:account.linkedAs', { name: p.name, email: identity.email }) : p.name,
        ' ',
        action,
      );
    }),
  );

  const sessionList = el(
    'ul',
    { id: 'session-list' },
    ...sessions.map((s) =>
      el(
        'li',
        { 'data-current': String(s.current) },
        el('span', { translate: 'no' }, s.device),
        ' ',
        t(s.current ? 'settings:account.sessionCurrent' : 'settings:account.session', { ip: s.ip ?? '' }),
        ' ',
        timeEl(s.last_seen_at),
      ),
    ),
  );
  const endOthers = el(
    'button',
    {
      type: 'button',
      id: 'end-others',
      onclick: async () => {
        const { ended } = await api('/account/sessions', { method: 'DELETE' });
        say(status, t('settings:account.othersEnded', { count: ended, n: formatNumber(ended) }), 'success');
        await refresh();
      },
    },
    t('settings:account.signOutOthers'),
  );

  const change = miniForm(
    'password-form',
    t('settings:account.changePasswordTitle'),
    [
      ...(me.has_password
        ? [{ name: 'current_password', label: t('settings:account.currentPassword'), autocomplete: 'current-password' }]
        : []),
      { name: 'password', label: t('settings:account.newPassword'), autocomplete: 'new-password' },
    ],
    t('settings:account.changePasswordButton'),
    async (v) => {
      await api('/account/password', {
        method: 'POST',
        body: v.current_password === undefined ? { password: v.password } : v,
      });
      say(status, t('settings:account.passwordChanged'), 'success');
      await refresh();
    },
  );
  const remove = miniForm(
    'delete-account-form',
    t('settings:account.deleteTitle'),
    me.has_password
      ? [{ name: 'password', label: t('settings:account.currentPassword'), autocomplete: 'current-password' }]
      : [],
    t('settings:account.deleteButton'),
    async (v) => {
      if (!window.confirm(t('settings:account.deleteConfirm'))) return;
      await api('/account', { method: 'DELETE', body: v.password ? { password: v.password } : {} });
      say(status, t('settings:account.deleted'), 'success');
      onGone();
    },
    'danger',
  );
  // The explanation under the form's heading, before its field (not above the heading).
  remove.querySelector('h3').after(el('p', { class: 'hint' }, t('settings:account.deleteHint')));
  // What cannot be undone stands apart from the rest, framed in the danger colour.
  remove.classList.add('danger-zone');

  panel.replaceChildren(
    el('h2', {}, t('settings:account.accountTitle')),
    verify,
    el('h3', {}, t('settings:account.linkedTitle')),
    methods,
    passkeys && passkeysSupported() ? await passkeyList(status, refresh).catch(() => '') : '',
    el('h3', {}, t('settings:account.sessionsTitle')),
    sessionList,
    endOthers,
    change,
    remove,
  );
  panel.hidden = false;
}

/** Shows a key's last 30 days as a chart below the keys table. */
export async function showUsage(key, status) {
  const box = byId('usage-panel');
  try {
    const days = await api(`/account/keys/${encodeURIComponent(key.id)}/usage?days=30`);
    const quiet = days.every((d) => d.requests === 0);
    box.replaceChildren(
      el('h3', {}, t('settings:account.usageTitle', { name: key.name })),
      quiet ? el('p', { class: 'muted' }, t('settings:account.usageNone')) : usageChart(days),
      el('button', { type: 'button', class: 'small', onclick: () => (box.hidden = true) }, t('settings:account.close')),
    );
    box.hidden = false;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    say(status, err.message, 'error');
  }
}
