// @ts-check
// Subscriptions on the settings page: list the account's, add one (a collection URL, an interval,
// audio only), pause or resume, delete after a confirmation. It speaks /api/v1/subscriptions with the
// session cookie. Its static words are data-i18n in settings.html; the rest come from the settings
// catalog (namespace settings:subs.*).
import { api, el, say, timeEl } from './api.js';
import { formatNumber, t } from './i18n.js';

const STATUS = {
  active: 'settings:subs.status.active',
  paused: 'settings:subs.status.paused',
  failing: 'settings:subs.status.failing',
};
const EVERY = {
  900: 'settings:subs.every.900',
  3600: 'settings:subs.every.3600',
  21600: 'settings:subs.every.21600',
  86400: 'settings:subs.every.86400',
  604800: 'settings:subs.every.604800',
};

function itemsText(completed, failed) {
  const done = t('settings:subs.items', { count: completed, n: formatNumber(completed) });
  return failed ? `${done}${t('settings:subs.itemsFailed', { count: failed, n: formatNumber(failed) })}` : done;
}

const byId = (id) => /** @type {any} */ (document.getElementById(id));

/** Fills the table from the server. */
export async function loadSubscriptions() {
  const body = byId('subs-body');
  const table = byId('subs-table');
  const none = byId('no-subs');
  const list = await api('/api/v1/subscriptions');
  body.replaceChildren(...list.map(row));
  table.hidden = list.length === 0;
  none.hidden = list.length !== 0;
}

function row(sub) {
  const status = byId('subs-status');
  const toggle = el(
    'button',
    {
      type: 'button',
      onclick: async () => {
        const next = sub.status === 'paused' ? 'active' : 'paused';
        try {
          await api(`/api/v1/subscriptions/${encodeURIComponent(sub.id)}`, { method: 'PATCH', body: { status: next } });
          say(
            status,
            next === 'paused'
              ? t('settings:subs.paused', { name: sub.name })
              : t('settings:subs.resumed', { name: sub.name }),
            'success',
          );
          await loadSubscriptions();
        } catch (err) {
          say(status, err.message, 'error');
        }
      },
    },
    sub.status === 'paused' ? t('settings:subs.resume') : t('settings:subs.pause'),
  );
  const remove = el(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        if (!window.confirm(t('settings:subs.confirmDelete', { name: sub.name }))) return;
        try {
          await api(`/api/v1/subscriptions/${encodeURIComponent(sub.id)}`, { method: 'DELETE' });
          say(status, t('settings:subs.deleted', { name: sub.name }), 'success');
          await loadSubscriptions();
        } catch (err) {
          say(status, err.message, 'error');
        }
      },
    },
    t('settings:subs.remove'),
  );
  return el(
    'tr',
    {},
    el('td', { translate: 'no' }, el('strong', {}, sub.name), el('br'), el('span', { class: 'muted' }, sub.url)),
    el('td', { title: sub.last_error ?? '' }, STATUS[sub.status] ? t(STATUS[sub.status]) : sub.status),
    el(
      'td',
      {},
      EVERY[sub.every] ? t(EVERY[sub.every]) : t('settings:subs.everySeconds', { n: formatNumber(sub.every) }),
    ),
    el('td', {}, timeEl(sub.last_checked_at)),
    el('td', {}, itemsText(sub.items.completed, sub.items.failed)),
    el('td', { class: 'actions' }, toggle, ' ', remove),
  );
}

/** The add form: a collection URL, how often, audio only. */
export function setUpSubscriptionForm() {
  fillIntervals();
  const form = byId('subs-form');
  const box = form.querySelector('.form-error');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const url = form.elements.url.value.trim();
    box.textContent = '';
    if (!url) {
      box.textContent = t('settings:subs.needUrl');
      form.elements.url.focus();
      return;
    }
    const every = Number(form.elements.every.value);
    const preset = form.elements.audio.checked ? { audio_only: true } : {};
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const sub = await api('/api/v1/subscriptions', { method: 'POST', body: { url, every, preset } });
      say(byId('subs-status'), t('settings:subs.added', { name: sub.name }), 'success');
      form.reset();
      await loadSubscriptions();
    } catch (err) {
      box.textContent = err.message;
    } finally {
      button.disabled = false;
    }
  });
}

/** The interval choices in the page's language, keeping the one chosen (hourly at first). */
export function fillIntervals() {
  const select = byId('subs-every');
  const chosen = select.value || '3600';
  select.replaceChildren(
    ...Object.entries(EVERY).map(([seconds, key]) =>
      el('option', { value: seconds, selected: seconds === chosen }, t(key)),
    ),
  );
}
