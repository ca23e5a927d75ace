// @ts-check
// API key settings (/settings/api-keys): sign up or in, list keys with their usage, create a key
// (its secret is shown once, in memory only), disable, enable and delete with a confirmation.
import { ApiError, api, el, say, timeEl } from './api.js';
import { accountPanel, handleMailedLink, showUsage, signedOutExtras } from './account.js';
import { LANGUAGE_EVENT, formatNumber, ready, t } from './i18n.js';
import { fillIntervals, loadSubscriptions, setUpSubscriptionForm } from './subscriptions.js';

const byId = (id) => /** @type {any} */ (document.getElementById(id));
const status = byId('status');
const loading = byId('loading');
const signedOut = byId('signed-out');
const signedIn = byId('signed-in');
const accountEmail = byId('account-email');
const createForm = byId('create-form');
const keyName = byId('key-name');
const keysTable = byId('keys-table');
const keysBody = byId('keys-body');
const noKeys = byId('no-keys');
const secretPanel = byId('secret-panel');
const secretValue = byId('secret-value');
const copyStatus = byId('copy-status');
const deleteDialog = byId('delete-dialog');

/** Every account call: a lost session sends the user back to the sign-in forms. */
async function account(path, options) {
  try {
    return await api(path, options);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_signed_in' && path !== '/account/me') {
      showSignedOut();
      say(status, t('settings:sessionEnded'), 'error');
    }
    throw err;
  }
}

function formError(form, message) {
  const box = form.querySelector('.form-error');
  box.textContent = message;
}

function showSignedOut() {
  signedIn.hidden = true;
  signedOut.hidden = false;
  hideSecret();
  keysBody.replaceChildren();
  signedOutExtras(status).catch((err) => say(status, err.message, 'error'));
}

async function showSignedIn(me) {
  current = me;
  accountEmail.textContent = me.email;
  signedOut.hidden = true;
  signedIn.hidden = false;
  await loadKeys();
  await accountPanel(me, status, showSignedOut);
  await loadSubscriptions().catch((err) => say(byId('subs-status'), err.message, 'error'));
}

async function start() {
  await handleMailedLink(status);
  try {
    await showSignedIn(await api('/account/me'));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) showSignedOut();
    else say(status, err.message, 'error');
  } finally {
    loading.hidden = true;
  }
}

/** Sign-up and sign-in forms: same fields, different route and checks. */
function authForm(form, path, { minPassword }) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const email = form.elements.email;
    const password = form.elements.password;
    const problem =
      !email.value.trim() || !email.checkValidity()
        ? [email, t('settings:invalidEmail')]
        : password.value.length < minPassword
          ? [
              password,
              minPassword > 1 ? t('settings:passwordTooShort', { count: minPassword }) : t('settings:passwordMissing'),
            ]
          : null;
    for (const input of [email, password]) input.removeAttribute('aria-invalid');
    if (problem) {
      problem[0].setAttribute('aria-invalid', 'true');
      problem[0].focus();
      formError(form, problem[1]);
      return;
    }
    formError(form, '');
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    try {
      await api(path, { method: 'POST', body: { email: email.value.trim(), password: password.value } });
      form.reset();
      say(status, '');
      await showSignedIn(await api('/account/me'));
      keyName.focus();
    } catch (err) {
      formError(form, err.message);
    } finally {
      button.disabled = false;
    }
  });
}

authForm(byId('signup-form'), '/account/signup', { minPassword: 10 });
authForm(byId('login-form'), '/account/login', { minPassword: 1 });

byId('logout-button').addEventListener('click', async () => {
  try {
    await api('/account/logout', { method: 'POST' });
    showSignedOut();
    say(status, t('settings:signedOut'), 'success');
    byId('login-email').focus();
  } catch (err) {
    say(status, err.message, 'error');
  }
});

// ---- keys

/** From the counts themselves, so it reads the same whatever scale success_rate uses. */
function successRate(usage) {
  const total = usage?.total_requests ?? 0;
  return total
    ? formatNumber((usage.successful_requests ?? 0) / total, { style: 'percent', maximumFractionDigits: 1 })
    : t('common:none');
}

async function loadKeys(focusAfter) {
  const { keys } = await account('/account/keys');
  keysBody.replaceChildren(...keys.map(keyRow));
  keysTable.hidden = keys.length === 0;
  noKeys.hidden = keys.length !== 0;
  if (focusAfter) keysBody.querySelector(focusAfter)?.focus();
}

function keyRow(key) {
  const usage = key.usage ?? {};
  const toggle = el(
    'button',
    {
      type: 'button',
      class: 'small',
      'data-key-id': key.id,
      'data-action': 'toggle',
      'aria-label': t(key.enabled ? 'settings:keys.disableLabel' : 'settings:keys.enableLabel', { name: key.name }),
    },
    t(key.enabled ? 'settings:keys.disable' : 'settings:keys.enable'),
  );
  toggle.addEventListener('click', () => setEnabled(key, !key.enabled));
  const remove = el(
    'button',
    { type: 'button', class: 'small danger', 'aria-label': t('settings:keys.deleteLabel', { name: key.name }) },
    t('settings:keys.delete'),
  );
  remove.addEventListener('click', () => deleteKey(key));
  const usageButton = el(
    'button',
    { type: 'button', class: 'small', 'aria-label': t('settings:keys.usageLabel', { name: key.name }) },
    t('settings:account.usage'),
  );
  usageButton.addEventListener('click', () => showUsage(key, status));
  return el(
    'tr',
    { 'data-key-id': key.id },
    el('th', { scope: 'row', translate: 'no' }, key.name),
    el('td', { 'data-label': t('settings:keys.col.key') }, el('code', {}, `${key.prefix}…`)),
    el(
      'td',
      { 'data-label': t('settings:keys.col.status') },
      el(
        'span',
        { class: 'badge', 'data-status': key.enabled ? 'enabled' : 'disabled' },
        t(key.enabled ? 'settings:keys.enabled' : 'settings:keys.disabled'),
      ),
    ),
    el('td', { 'data-label': t('settings:keys.col.created') }, timeEl(key.created_at)),
    el('td', { 'data-label': t('settings:keys.col.lastUsed') }, timeEl(key.last_used_at, t('common:never'))),
    el('td', { class: 'num', 'data-label': t('settings:keys.col.requests') }, formatNumber(usage.total_requests ?? 0)),
    el(
      'td',
      { class: 'num', 'data-label': t('settings:keys.col.successful') },
      formatNumber(usage.successful_requests ?? 0),
    ),
    el('td', { class: 'num', 'data-label': t('settings:keys.col.rate') }, successRate(usage)),
    el('td', { class: 'actions' }, usageButton, toggle, remove),
  );
}

createForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = keyName.value.trim();
  if (!name) {
    keyName.setAttribute('aria-invalid', 'true');
    formError(createForm, t('settings:keys.needName'));
    keyName.focus();
    return;
  }
  keyName.removeAttribute('aria-invalid');
  formError(createForm, '');
  const button = createForm.querySelector('button[type="submit"]');
  button.disabled = true;
  try {
    const created = await account('/account/keys', { method: 'POST', body: { name } });
    createForm.reset();
    showSecret(created.name, created.secret);
    await loadKeys();
  } catch (err) {
    formError(createForm, err.message);
  } finally {
    button.disabled = false;
  }
});

// The secret lives only in this panel's input until it is dismissed or the page is left.
function showSecret(name, secret) {
  byId('secret-name').textContent = name;
  secretValue.value = secret ?? '';
  copyStatus.textContent = '';
  secretPanel.hidden = false;
  secretPanel.focus();
}

function hideSecret() {
  secretValue.value = '';
  secretPanel.hidden = true;
}

byId('secret-done').addEventListener('click', () => {
  hideSecret();
  keyName.focus();
});

byId('copy-button').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText(secretValue.value);
    copyStatus.textContent = t('settings:secret.copied');
  } catch {
    // No clipboard API (an insecure origin) or permission refused: select it for the user.
    secretValue.focus();
    secretValue.select();
    const copied = document.execCommand?.('copy');
    copyStatus.textContent = copied ? t('settings:secret.copied') : t('settings:secret.selected');
  }
});

async function setEnabled(key, enabled) {
  try {
    await account(`/account/keys/${encodeURIComponent(key.id)}/${enabled ? 'enable' : 'disable'}`, { method: 'POST' });
    await loadKeys(`button[data-key-id="${CSS.escape(key.id)}"][data-action="toggle"]`);
    say(status, t(enabled ? 'settings:keys.nowEnabled' : 'settings:keys.nowDisabled', { name: key.name }), 'success');
  } catch (err) {
    say(status, err.message, 'error');
  }
}

/** Resolves true when the user confirms in the dialog; Escape and Cancel resolve false. */
function confirmDelete(key) {
  byId('delete-text').textContent = t('settings:deleteKey.text', { name: key.name, prefix: key.prefix });
  deleteDialog.returnValue = '';
  deleteDialog.showModal();
  byId('delete-cancel').focus();
  return new Promise((resolve) => {
    deleteDialog.addEventListener('close', () => resolve(deleteDialog.returnValue === 'delete'), { once: true });
  });
}
byId('delete-cancel').addEventListener('click', () => deleteDialog.close('cancel'));
byId('delete-confirm').addEventListener('click', () => deleteDialog.close('delete'));

async function deleteKey(key) {
  if (!(await confirmDelete(key))) return;
  try {
    await account(`/account/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
    await loadKeys();
    say(status, t('settings:keys.deleted', { name: key.name }), 'success');
    keyName.focus();
  } catch (err) {
    say(status, err.message, 'error');
  }
}

/** The signed-in view as the server has it now (after a sign-in, or in another language). */
let current = null;

// Another language: the static words are translated already; the lists are built again.
window.addEventListener(LANGUAGE_EVENT, () => {
  fillIntervals();
  if (current && !signedIn.hidden) showSignedIn(current).catch((err) => say(status, err.message, 'error'));
  else if (!signedOut.hidden) signedOutExtras(status).catch((err) => say(status, err.message, 'error'));
});

await ready.catch(() => undefined);
setUpSubscriptionForm();
start();
