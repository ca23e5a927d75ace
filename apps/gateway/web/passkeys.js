// @ts-check
// Passkeys in the browser with navigator.credentials directly: the server's JSON options are parsed
// by PublicKeyCredential.parse*OptionsFromJSON and the answer sent back as credential.toJSON().
import { api, el, say, timeEl } from './api.js';
import { t } from './i18n.js';

const PKC = /** @type {any} */ (globalThis.PublicKeyCredential);
export const passkeysSupported = () =>
  Boolean(PKC && PKC.parseCreationOptionsFromJSON && PKC.parseRequestOptionsFromJSON);

/** Creates a passkey on this device for the signed-in account, under `name`. */
export async function addPasskey(name) {
  const options = await api('/account/passkeys/register/options', { method: 'POST' });
  const credential = /** @type {any} */ (
    await navigator.credentials.create({ publicKey: PKC.parseCreationOptionsFromJSON(options) })
  );
  return api('/account/passkeys/register', {
    method: 'POST',
    body: { name: name || undefined, response: credential.toJSON() },
  });
}

/** Signs in with a passkey the authenticator offers (discoverable credentials: no e-mail first). */
export async function signInWithPasskey() {
  const options = await api('/account/passkeys/login/options', { method: 'POST' });
  const credential = /** @type {any} */ (
    await navigator.credentials.get({ publicKey: PKC.parseRequestOptionsFromJSON(options) })
  );
  return api('/account/passkeys/login', { method: 'POST', body: { response: credential.toJSON() } });
}

/** The passkeys part of the account card: list, rename, remove, add. */
export async function passkeyList(status, refresh) {
  const { passkeys } = await api('/account/passkeys');
  const rows = passkeys.map((p) =>
    el(
      'li',
      { 'data-passkey': p.name },
      el('span', { translate: 'no' }, p.name),
      ` · ${t('settings:account.passkeyAdded')} `,
      timeEl(p.created_at),
      ' ',
      el(
        'button',
        {
          type: 'button',
          class: 'small',
          onclick: async () => {
            const name = window.prompt(t('settings:account.passkeyRenamePrompt'), p.name);
            if (!name) return;
            await api(`/account/passkeys/${encodeURIComponent(p.id)}/name`, { method: 'POST', body: { name } }).catch(
              (err) => say(status, err.message, 'error'),
            );
            await refresh();
          },
        },
        t('settings:account.rename'),
      ),
      el(
        'button',
        {
          type: 'button',
          class: 'small danger',
          'aria-label': t('settings:account.passkeyRemove', { name: p.name }),
          onclick: async () => {
            await api(`/account/passkeys/${encodeURIComponent(p.id)}`, { method: 'DELETE' }).catch((err) =>
              say(status, err.message, 'error'),
            );
            await refresh();
          },
        },
        t('settings:account.remove'),
      ),
    ),
  );
  const nameInput = el('input', {
    id: 'passkey-name',
    type: 'text',
    maxlength: 64,
    placeholder: t('settings:account.passkeyNamePlaceholder'),
    autocomplete: 'off',
  });
  const add = el(
    'button',
    {
      type: 'button',
      id: 'add-passkey',
      onclick: async () => {
        try {
          await addPasskey(nameInput.value.trim());
          say(status, t('settings:account.passkeyAddedDone'), 'success');
          await refresh();
        } catch (err) {
          say(status, err.message, 'error');
        }
      },
    },
    t('settings:account.addPasskey'),
  );
  return el(
    'div',
    { id: 'passkeys' },
    el('h3', {}, t('settings:account.passkeysTitle')),
    el('ul', { id: 'passkey-list' }, ...rows),
    el('label', { for: 'passkey-name' }, t('settings:account.passkeyName')),
    ' ',
    nameInput,
    ' ',
    add,
  );
}
