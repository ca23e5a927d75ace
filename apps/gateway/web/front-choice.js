// @ts-check
// What the front page asks before downloading, when one action cannot decide: a collection (a
// playlist, channel or feed) shows its entries to pick some or take all; a live stream offers to
// record it (the recording is stopped from the queue).
import { el } from './api.js';
import { formatNumber, t } from './i18n.js';

/**
 * The entries of a collection with a checkbox each. `onDownload` gets the selection: "all", or the
 * 1-based indexes as the API counts them.
 * @param {HTMLElement} panel @param {any} info the extract answer
 * @param {(entries: 'all' | number[], button: HTMLButtonElement) => void} onDownload
 */
export function showCollection(panel, info, onDownload) {
  const entries = info.entries ?? [];
  const total = info.collection?.entry_count ?? entries.length;
  const boxes = entries.map((entry) =>
    el('input', { type: 'checkbox', id: `entry-${entry.index}`, value: String(entry.index), checked: true }),
  );
  const list = el(
    'ol',
    { class: 'entry-list' },
    ...entries.map((entry, i) =>
      el(
        'li',
        {},
        boxes[i],
        el('label', { for: `entry-${entry.index}` }, entry.title || entry.url, typeof entry.duration === 'number' ? el('span', { class: 'muted' }, ` · ${clock(entry.duration)}`) : null),
      ),
    ),
  );
  const chosen = () => boxes.filter((b) => b.checked).map((b) => Number(b.value));
  const pickButton = el('button', { type: 'button', class: 'primary', 'data-action': 'download-selected' }, t('front:downloadSelected', { count: entries.length }));
  const allButton = el('button', { type: 'button', 'data-action': 'download-all' }, t('front:downloadAll', { count: total }));
  const toggle = el('button', { type: 'button', class: 'small', 'data-action': 'toggle' }, t('front:selectNone'));
  const refresh = () => {
    const n = chosen().length;
    pickButton.textContent = t('front:downloadSelected', { count: n });
    pickButton.disabled = n === 0;
    toggle.textContent = n === boxes.length ? t('front:selectNone') : t('front:selectAll');
  };
  for (const box of boxes) box.addEventListener('change', refresh);
  toggle.addEventListener('click', () => {
    const all = chosen().length !== boxes.length;
    for (const box of boxes) box.checked = all;
    refresh();
  });
  pickButton.addEventListener('click', () => {
    const picked = chosen();
    if (picked.length) onDownload(picked.length === entries.length && total === entries.length ? 'all' : picked, pickButton);
  });
  allButton.addEventListener('click', () => onDownload('all', allButton));
  const parts = [
    el('h2', { id: 'choice-title' }, info.title || t('front:collection')),
    el('p', { class: 'muted' }, t(`front:kind${kindName(info.collection?.kind)}`), ' · ', t('front:entryCount', { count: total })),
    total > entries.length ? el('p', { class: 'hint' }, t('front:firstEntries', { shown: formatNumber(entries.length), total: formatNumber(total) })) : null,
    el('div', { class: 'choice-tools' }, toggle),
    el('fieldset', { class: 'entries' }, el('legend', { class: 'visually-hidden' }, t('front:pickLegend')), list),
    // "All" differs from every listed entry only when the collection has more than this page lists.
    el('div', { class: 'choice-actions' }, pickButton, total > entries.length ? allButton : null),
  ];
  panel.replaceChildren(...parts.filter((part) => part !== null));
  panel.hidden = false;
}

/**
 * A live stream: what it is and a Record button. @param {HTMLElement} panel @param {any} info
 * @param {(button: HTMLButtonElement) => void} onRecord
 */
export function showLive(panel, info, onRecord) {
  const record = el('button', { type: 'button', class: 'primary', 'data-action': 'record' }, t('front:record'));
  record.addEventListener('click', () => onRecord(record));
  panel.replaceChildren(
    el('h2', { id: 'choice-title' }, info.title || t('front:liveTitle')),
    el('p', {}, el('span', { class: 'badge live-badge' }, t('front:live')), ' ', t('front:liveHint')),
    el('div', { class: 'choice-actions' }, record),
  );
  panel.hidden = false;
}

/** playlist → Playlist, for its catalog key; unknown kinds read as a playlist. */
function kindName(kind) {
  return { channel: 'Channel', feed: 'Feed', profile: 'Profile' }[kind] ?? 'Playlist';
}

/** 75 → "1:15". @param {number} seconds */
function clock(seconds) {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}
