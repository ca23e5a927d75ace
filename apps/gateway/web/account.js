// @ts-check
// The account parts of the settings page beside the keys: social sign-in buttons, the forgotten-
// password and reset forms, mailed links (#verify=…, #reset=…: the token stays in the fragment and
// is posted once, then removed from the address bar), sign-in methods, sessions, password change,
// deletion and each key's usage chart. Strings come from account-text.js.
import { ApiError, api, el, say, timeEl } from './api.js';
import { text } from './account-text.js';
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
  const passkeyButton = passkeys && passkeysSupported()
    ? el('button', { type: 'button', id: 'passkey-signin', onclick: async () => {
        try {
          await signInWithPasskey();
          location.reload();
        } catch (err) {
          say(status, err.message, 'error');
        }
      } }, text.signInWithPasskey)
    : null;
  box.replaceChildren(
    el('p', {}, text.orSocial),
    ...providers.map((p) => el('a', { class: 'button', href: `/account/oauth/${encodeURIComponent(p.id)}/start?return_to=/settings/api-keys`, 'data-provider': p.id }, text.signInWith(p.name))),
    passkeyButton,
  );
  box.hidden = !providers.length && !passkeyButton;
  const forgot = byId('forgot-form');
  forgot.hidden = !mail;
  if (!mail) return;
  forgot.replaceChildren(
    el('h2', {}, text.forgotTitle),
    el('p', { class: 'hint' }, text.forgotHint),
    el('div', { class: 'field' }, el('label', { for: 'forgot-email' }, 'E-mail'), el('input', { id: 'forgot-email', type: 'email', required: true, autocomplete: 'email' })),
    el('p', { class: 'form-error', role: 'alert' }),
    el('button', { type: 'submit' }, text.forgotButton),
  );
  forgot.onsubmit = async (event) => {
    event.preventDefault();
    try {
      await api('/account/password/forgot', { method: 'POST', body: { email: byId('forgot-email').value } });
      say(status, text.forgotSent, 'success');
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
    say(status, returned.get('message') || text.signInFailed, 'error');
    return;
  }
  const link = takeLinkToken();
  if (!link) return;
  if (link.kind === 'verify') {
    try {
      await api('/account/verify', { method: 'POST', body: { token: link.token } });
      say(status, text.verifyDone, 'success');
    } catch (err) {
      say(status, err.message, 'error');
    }
    return;
  }
  const form = byId('reset-form');
  form.hidden = false;
  form.replaceChildren(
    el('h2', {}, text.resetTitle),
    el('div', { class: 'field' }, el('label', { for: 'reset-password' }, text.newPassword), el('input', { id: 'reset-password', type: 'password', required: true, minlength: 10, autocomplete: 'new-password' })),
    el('p', { class: 'form-error', role: 'alert' }),
    el('button', { type: 'submit', class: 'primary' }, text.resetButton),
  );
  form.onsubmit = async (event) => {
    event.preventDefault();
    try {
      await api('/account/password/reset', { method: 'POST', body: { token: link.token, password: byId('reset-password').value } });
      form.hidden = true;
      say(status, text.resetDone, 'success');
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
    ...fields.map((f) => el('div', { class: 'field' }, el('label', { for: `${id}-${f.name}` }, f.label), el('input', { id: `${id}-${f.name}`, name: f.name, type: f.type ?? 'password', autocomplete: f.autocomplete ?? 'off' }))),
    el('p', { class: 'form-error', role: 'alert' }),
    el('button', { type: 'submit', class: buttonClass }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(fields.map((f) => [f.name, /** @type {HTMLInputElement} */ (form.querySelector(`[name="${f.name}"]`)).value]));
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
  const [{ providers, passkeys }, { sessions }] = await Promise.all([features(), api('/account/sessions')]);
  const linked = new Map((me.identities ?? []).map((i) => [i.provider, i]));
  const refresh = async () => accountPanel(await api('/account/me'), status, onGone);

  const verify = me.email_verified === false
    ? el('p', { class: 'warning', id: 'verify-notice' }, text.unverified, ' ', el('button', { type: 'button', class: 'small', onclick: async () => {
        try {
          await api('/account/verify/resend', { method: 'POST' });
          say(status, text.resent, 'success');
        } catch (err) {
          say(status, err.message, 'error');
        }
      } }, text.resend))
    : null;

  const methods = el(
    'ul',
    { id: 'sign-in-methods' },
    el('li', {}, `${text.password}: ${me.has_password ? text.passwordSet : text.passwordNone}`),
    ...providers.map((p) => {
      const identity = linked.get(p.id);
      const action = identity
        ? el('button', { type: 'button', class: 'small', onclick: async () => {
            try {
              await api(`/account/oauth/${encodeURIComponent(p.id)}`, { method: 'DELETE' });
              await refresh();
            } catch (err) {
              say(status, err.message, 'error');
            }
          } }, text.unlink(p.name))
        : el('button', { type: 'button', class: 'small', onclick: async () => {
            const { url } = await api(`/account/oauth/${encodeURIComponent(p.id)}/link`, { method: 'POST' });
            location.assign(url);
          } }, text.link(p.name));
      return el('li', { 'data-provider': p.id }, identity ? text.linkedAs(p.name, identity.email) : p.name, ' ', action);
    }),
  );

  const sessionList = el(
    'ul',
    { id: 'session-list' },
    ...sessions.map((s) => el('li', { 'data-current': String(s.current) }, `${s.device}${s.current ? ` (${text.thisDevice})` : ''} · ${s.ip ?? ''} · ${text.lastSeen} `, timeEl(s.last_seen_at))),
  );
  const endOthers = el('button', { type: 'button', id: 'end-others', onclick: async () => {
    const { ended } = await api('/account/sessions', { method: 'DELETE' });
    say(status, text.othersEnded(ended), 'success');
    await refresh();
  } }, text.signOutOthers);

  const change = miniForm(
    'password-form',
    text.changePasswordTitle,
    [...(me.has_password ? [{ name: 'current_password', label: text.currentPassword, autocomplete: 'current-password' }] : []), { name: 'password', label: text.newPassword, autocomplete: 'new-password' }],
    text.changePasswordButton,
    async (v) => {
      await api('/account/password', { method: 'POST', body: v.current_password === undefined ? { password: v.password } : v });
      say(status, text.passwordChanged, 'success');
      await refresh();
    },
  );
  const remove = miniForm(
    'delete-account-form',
    text.deleteTitle,
    me.has_password ? [{ name: 'password', label: text.currentPassword, autocomplete: 'current-password' }] : [],
    text.deleteButton,
    async (v) => {
      if (!window.confirm(text.deleteConfirm)) return;
      await api('/account', { method: 'DELETE', body: v.password ? { password: v.password } : {} });
      say(status, text.deleted, 'success');
      onGone();
    },
    'danger',
  );
  remove.prepend(el('p', { class: 'hint' }, text.deleteHint));

  panel.replaceChildren(
    el('h2', {}, text.accountTitle),
    verify,
    el('h3', {}, text.linkedTitle),
    methods,
    passkeys && passkeysSupported() ? await passkeyList(status, refresh).catch(() => '') : '',
    el('h3', {}, text.sessionsTitle),
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
    box.replaceChildren(el('h3', {}, text.usageTitle(key.name)), usageChart(days), el('button', { type: 'button', class: 'small', onclick: () => (box.hidden = true) }, text.close));
    box.hidden = false;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    say(status, err.message, 'error');
  }
}
