// @ts-check
// Subscriptions on the settings page: list the account's, add one (a collection URL, an interval,
// audio only), pause or resume, delete after a confirmation. It speaks /api/v1/subscriptions with the
// session cookie. Every user-facing string is in STRINGS, for the translation pass.
import { api, el, say, timeEl } from './api.js';

export const STRINGS = {
  title: 'Subscriptions',
  lead: 'Watch a podcast feed, playlist or channel: each new entry is downloaded as it appears.',
  urlLabel: 'Feed, playlist or channel address',
  everyLabel: 'How often',
  audioOnly: 'Audio only',
  subscribe: 'Subscribe',
  columns: { name: 'Name', status: 'Status', every: 'Checked', checked: 'Last check', items: 'Items' },
  none: 'You have no subscriptions yet.',
  added: (name) => `Subscribed to “${name}”. New entries will be downloaded as they appear.`,
  paused: (name) => `“${name}” is paused.`,
  resumed: (name) => `“${name}” is active again.`,
  deleted: (name) => `Stopped watching “${name}”.`,
  confirmDelete: (name) => `Stop watching “${name}”? Downloads already started go on.`,
  needUrl: 'Enter the address of a feed, playlist or channel.',
  pause: 'Pause',
  resume: 'Resume',
  remove: 'Delete',
  status: { active: 'Active', paused: 'Paused', failing: 'Failing' },
  every: { 900: 'Every 15 minutes', 3600: 'Every hour', 21600: 'Every 6 hours', 86400: 'Every day', 604800: 'Every week' },
  items: (completed, failed) => `${completed} downloaded${failed ? `, ${failed} failed` : ''}`,
};

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
  none.textContent = STRINGS.none;
}

function row(sub) {
  const status = byId('subs-status');
  const toggle = el('button', {
    type: 'button',
    onclick: async () => {
      const next = sub.status === 'paused' ? 'active' : 'paused';
      try {
        await api(`/api/v1/subscriptions/${encodeURIComponent(sub.id)}`, { method: 'PATCH', body: { status: next } });
        say(status, next === 'paused' ? STRINGS.paused(sub.name) : STRINGS.resumed(sub.name), 'success');
        await loadSubscriptions();
      } catch (err) {
        say(status, err.message, 'error');
      }
    },
  }, sub.status === 'paused' ? STRINGS.resume : STRINGS.pause);
  const remove = el('button', {
    type: 'button',
    class: 'danger',
    onclick: async () => {
      if (!window.confirm(STRINGS.confirmDelete(sub.name))) return;
      try {
        await api(`/api/v1/subscriptions/${encodeURIComponent(sub.id)}`, { method: 'DELETE' });
        say(status, STRINGS.deleted(sub.name), 'success');
        await loadSubscriptions();
      } catch (err) {
        say(status, err.message, 'error');
      }
    },
  }, STRINGS.remove);
  return el('tr', {},
    el('td', {}, el('strong', {}, sub.name), el('br'), el('span', { class: 'muted' }, sub.url)),
    el('td', { title: sub.last_error ?? '' }, STRINGS.status[sub.status] ?? sub.status),
    el('td', {}, STRINGS.every[sub.every] ?? `${sub.every} s`),
    el('td', {}, timeEl(sub.last_checked_at)),
    el('td', {}, STRINGS.items(sub.items.completed, sub.items.failed)),
    el('td', { class: 'actions' }, toggle, ' ', remove),
  );
}

/** The add form: a collection URL, how often, audio only. */
export function setUpSubscriptionForm() {
  const text = { 'subs-title': STRINGS.title, 'subs-lead': STRINGS.lead, 'subs-url-label': STRINGS.urlLabel, 'subs-every-label': STRINGS.everyLabel, 'subs-audio-label': STRINGS.audioOnly, 'subs-submit': STRINGS.subscribe };
  for (const [id, value] of Object.entries(text)) byId(id).textContent = value;
  for (const [key, value] of Object.entries(STRINGS.columns)) byId(`subs-col-${key}`).textContent = value;
  byId('subs-every').replaceChildren(...Object.entries(STRINGS.every).map(([seconds, label]) => el('option', { value: seconds, selected: seconds === '3600' }, label)));
  const form = byId('subs-form');
  const box = form.querySelector('.form-error');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const url = form.elements.url.value.trim();
    box.textContent = '';
    if (!url) {
      box.textContent = STRINGS.needUrl;
      form.elements.url.focus();
      return;
    }
    const every = Number(form.elements.every.value);
    const preset = form.elements.audio.checked ? { audio_only: true } : {};
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const sub = await api('/api/v1/subscriptions', { method: 'POST', body: { url, every, preset } });
      say(byId('subs-status'), STRINGS.added(sub.name), 'success');
      form.reset();
      await loadSubscriptions();
    } catch (err) {
      box.textContent = err.message;
    } finally {
      button.disabled = false;
    }
  });
}
