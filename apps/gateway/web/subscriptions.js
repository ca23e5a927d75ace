// @ts-check
// Subscriptions on the settings page: list the account's (how often each is checked, when it was
// last and is next, what it downloaded), add one (a collection URL, an interval, audio only), check
// one now, pause or resume, delete after a confirmation, and open a subscription's items: each
// entry it downloaded, with its state and a Save link for a finished file. It speaks
// /api/v1/subscriptions with the session cookie. Its static words are data-i18n in settings.html; the
// rest come from the settings catalog (namespace settings:subs.*).
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
/** The form's interval when nothing else was chosen (the API's default too). */
const DEFAULT_EVERY = '3600';
const ITEM_STATUS = {
  queued: 'settings:subs.item.queued',
  processing: 'settings:subs.item.processing',
  completed: 'settings:subs.item.completed',
  failed: 'settings:subs.item.failed',
  cancelled: 'settings:subs.item.cancelled',
  expired: 'settings:subs.item.expired',
};
/** Items listed at first when a subscription's list is opened; "Show all" lists the rest. */
const ITEMS_SHOWN = 20;

/** Subscriptions whose items are open, and those with every item shown: kept when the table is drawn again. */
const open = new Set();
const whole = new Set();
/** While an open list has downloads under way, the table is read again after this long. */
const REFRESH_MS = 3000;
let refresh = /** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined);

function itemsText(completed, failed) {
  const done = t('settings:subs.items', { count: completed, n: formatNumber(completed) });
  return failed ? `${done}${t('settings:subs.itemsFailed', { count: failed, n: formatNumber(failed) })}` : done;
}

/** An interval in its largest whole unit: seconds per unit, and the words. */
const UNITS = /** @type {const} */ ([
  [86400, 'settings:subs.everyUnit.days'],
  [3600, 'settings:subs.everyUnit.hours'],
  [60, 'settings:subs.everyUnit.minutes'],
  [1, 'settings:subs.everyUnit.seconds'],
]);

/** "Every hour" for the form's choices, else in the largest whole unit ("Every 5 minutes"). @param {number} seconds */
export function everyText(seconds) {
  if (EVERY[seconds]) return t(EVERY[seconds]);
  const [size, key] = UNITS.find(([unit]) => seconds % unit === 0) ?? UNITS[3];
  return t(key, { count: seconds / size, n: formatNumber(seconds / size) });
}

const byId = (id) => /** @type {any} */ (document.getElementById(id));

/** Fills the table from the server. */
export async function loadSubscriptions() {
  const body = byId('subs-body');
  const table = byId('subs-table');
  const none = byId('no-subs');
  const list = await api('/api/v1/subscriptions');
  for (const id of [...open]) if (!list.some((sub) => sub.id === id)) open.delete(id);
  // Drawn anew: the keyboard goes back to the control it was on (each names itself in data-focus).
  const focused = document.activeElement?.closest('#subs-body [data-focus]')?.getAttribute('data-focus');
  body.replaceChildren(...list.flatMap((sub) => rows(sub)));
  table.hidden = list.length === 0;
  none.hidden = list.length !== 0;
  const busy = await Promise.all(list.filter((sub) => open.has(sub.id)).map((sub) => showItems(sub)));
  if (focused) body.querySelector(`[data-focus="${CSS.escape(focused)}"]`)?.focus();
  clearTimeout(refresh);
  if (busy.some(Boolean)) refresh = setTimeout(() => loadSubscriptions().catch(() => undefined), REFRESH_MS);
}

/** A subscription's row, and the row below it where its items are listed when opened. */
function rows(sub) {
  const status = byId('subs-status');
  const act = (/** @type {() => Promise<void>} */ work) => async (/** @type {Event} */ event) => {
    const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
    button.disabled = true;
    try {
      await work();
    } catch (err) {
      say(status, err.message, 'error');
    } finally {
      button.disabled = false;
    }
  };
  const path = `/api/v1/subscriptions/${encodeURIComponent(sub.id)}`;
  const check = el(
    'button',
    {
      type: 'button',
      class: 'small',
      'data-focus': `${sub.id}:check`,
      'aria-label': t('settings:subs.checkLabel', { name: sub.name }),
      onclick: act(async () => {
        say(status, t('settings:subs.checking', { name: sub.name }));
        const { started } = await api(`${path}/check`, { method: 'POST' });
        say(
          status,
          started
            ? t('settings:subs.checkStarted', { count: started, n: formatNumber(started), name: sub.name })
            : t('settings:subs.checkNothing', { name: sub.name }),
          'success',
        );
        if (started) open.add(sub.id);
        await loadSubscriptions();
      }),
    },
    t('settings:subs.check'),
  );
  const toggle = el(
    'button',
    {
      type: 'button',
      class: 'small',
      'data-focus': `${sub.id}:toggle`,
      onclick: act(async () => {
        const next = sub.status === 'paused' ? 'active' : 'paused';
        await api(path, { method: 'PATCH', body: { status: next } });
        say(
          status,
          next === 'paused'
            ? t('settings:subs.paused', { name: sub.name })
            : t('settings:subs.resumed', { name: sub.name }),
          'success',
        );
        await loadSubscriptions();
      }),
    },
    sub.status === 'paused' ? t('settings:subs.resume') : t('settings:subs.pause'),
  );
  const remove = el(
    'button',
    {
      type: 'button',
      class: 'small danger',
      'data-focus': `${sub.id}:delete`,
      onclick: act(async () => {
        if (!window.confirm(t('settings:subs.confirmDelete', { name: sub.name }))) return;
        await api(path, { method: 'DELETE' });
        say(status, t('settings:subs.deleted', { name: sub.name }), 'success');
        await loadSubscriptions();
      }),
    },
    t('settings:subs.remove'),
  );
  const itemsId = `subs-items-${sub.id.replace(/[^A-Za-z0-9_-]/g, '')}`;
  const total = sub.items.completed + sub.items.failed;
  const show = el(
    'button',
    {
      type: 'button',
      class: 'small',
      'data-focus': `${sub.id}:items`,
      'aria-expanded': String(open.has(sub.id)),
      'aria-controls': itemsId,
      'aria-label': t(open.has(sub.id) ? 'settings:subs.hideItemsLabel' : 'settings:subs.showItemsLabel', {
        name: sub.name,
      }),
      onclick: act(async () => {
        if (open.has(sub.id)) open.delete(sub.id);
        else open.add(sub.id);
        await loadSubscriptions();
      }),
    },
    t(open.has(sub.id) ? 'settings:subs.hideItems' : 'settings:subs.showItems'),
  );
  const next = sub.next_check_at
    ? el('span', { class: 'muted block' }, t('settings:subs.next'), ' ', timeEl(sub.next_check_at))
    : null;
  return [
    el(
      'tr',
      { 'data-subscription-id': sub.id },
      el(
        'th',
        { scope: 'row', translate: 'no' },
        el('strong', {}, sub.name),
        el('span', { class: 'muted block sub-url' }, sub.url),
      ),
      el(
        'td',
        { 'data-label': t('settings:subs.col.status'), title: sub.last_error ?? '' },
        STATUS[sub.status] ? t(STATUS[sub.status]) : sub.status,
        sub.last_error ? el('span', { class: 'muted block', translate: 'no' }, sub.last_error) : null,
      ),
      el('td', { 'data-label': t('settings:subs.col.every') }, everyText(sub.every), next),
      el(
        'td',
        { 'data-label': t('settings:subs.col.checked') },
        timeEl(sub.last_checked_at, t('settings:subs.notYet')),
      ),
      el(
        'td',
        { 'data-label': t('settings:subs.col.items') },
        itemsText(sub.items.completed, sub.items.failed),
        total || open.has(sub.id) ? el('span', { class: 'block' }, show) : null,
      ),
      el('td', { class: 'actions' }, check, toggle, remove),
    ),
    el(
      'tr',
      { id: itemsId, class: 'sub-items', hidden: !open.has(sub.id) },
      el('td', { colspan: 6 }, el('p', { class: 'muted' }, t('settings:subs.loadingItems'))),
    ),
  ];
}

/** Lists a subscription's items in the row below it; answers whether downloads are under way. */
async function showItems(sub) {
  const row = byId(`subs-items-${sub.id.replace(/[^A-Za-z0-9_-]/g, '')}`);
  if (!row) return false;
  const cell = row.firstElementChild;
  let items;
  try {
    items = await api(`/api/v1/subscriptions/${encodeURIComponent(sub.id)}/items`);
  } catch (err) {
    cell.replaceChildren(el('p', { class: 'form-error' }, err.message));
    return false;
  }
  // Entries that were there before the subscription are only marked seen: counted, not listed.
  const downloads = items.filter((item) => item.job_id);
  const skipped = items.length - downloads.length;
  const list = el('ol', { class: 'sub-item-list', 'aria-label': t('settings:subs.itemsOf', { name: sub.name }) });
  const shown = whole.has(sub.id) ? downloads : downloads.slice(0, ITEMS_SHOWN);
  list.replaceChildren(...shown.map((item) => itemRow(item)));
  const all = el(
    'button',
    {
      type: 'button',
      class: 'small',
      onclick: () => {
        whole.add(sub.id);
        list.replaceChildren(...downloads.map((item) => itemRow(item)));
        all.remove();
      },
    },
    t('settings:subs.showAll', { count: downloads.length, n: formatNumber(downloads.length) }),
  );
  cell.replaceChildren(
    downloads.length ? list : el('p', { class: 'muted' }, t('settings:subs.noItems', { name: sub.name })),
    shown.length < downloads.length ? all : '',
    skipped ? el('p', { class: 'hint' }, t('settings:subs.skipped', { count: skipped, n: formatNumber(skipped) })) : '',
  );
  return downloads.some((item) => item.status === 'queued' || item.status === 'processing');
}

/** One item: its title, state and when it appeared, and Save for a finished file. */
function itemRow(item) {
  const name = item.title || item.url;
  const save =
    item.status === 'completed'
      ? el(
          'a',
          {
            class: 'button small',
            href: `/api/v1/jobs/${encodeURIComponent(item.job_id)}/artifact`,
            download: '',
            'data-focus': `${item.job_id}:save`,
            'aria-label': t('settings:subs.saveLabel', { name }),
          },
          t('settings:subs.save'),
        )
      : null;
  return el(
    'li',
    { 'data-status': item.status },
    el(
      'span',
      { class: 'sub-item-words' },
      el('strong', { translate: 'no' }, name),
      el(
        'span',
        { class: 'muted block' },
        ITEM_STATUS[item.status] ? t(ITEM_STATUS[item.status]) : item.status,
        ' · ',
        timeEl(item.seen_at),
      ),
    ),
    save,
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

/**
 * The interval choices in the page's language, keeping the one chosen. "Every hour" is the form's
 * default (its defaultSelected), so a reset after subscribing comes back to it, not to the first choice.
 */
export function fillIntervals() {
  const select = byId('subs-every');
  const chosen = select.value || DEFAULT_EVERY;
  select.replaceChildren(
    ...Object.entries(EVERY).map(([seconds, key]) => {
      const option = el('option', { value: seconds }, t(key));
      option.defaultSelected = seconds === DEFAULT_EVERY;
      return option;
    }),
  );
  select.value = chosen;
}
