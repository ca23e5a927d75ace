// @ts-check
// What the front page asks before downloading, when one action cannot decide: a collection (a
// playlist, channel or feed) shows its entries, a page at a time, to pick some or take all; a page
// with several items (a gallery, a post with several videos) shows its items to pick; a live stream
// offers to record it (the recording is stopped from the queue). Each panel keeps its words apart
// from its state: `reword()` says them again after a language switch without losing what was ticked,
// what was listed or where the keyboard was.
import { el } from './api.js';
import { t } from './i18n.js';

/**
 * Most pages "Show more" and "Download all" follow: the highest MAX_COLLECTION_ENTRIES (5,000) at 100
 * a page. The server's own limit ends the listing sooner (its last page says `truncated`).
 */
const MAX_PAGES = 50;

const KINDS = {
  playlist: 'front:kindPlaylist',
  channel: 'front:kindChannel',
  feed: 'front:kindFeed',
  profile: 'front:kindProfile',
};
const ITEM_TYPES = { video: 'front:itemVideo', audio: 'front:itemAudio', image: 'front:itemImage' };

/**
 * What a panel needs from the page around it: `run` does work with a button busy (its failure said
 * in the status line), `announce` says something there.
 * @typedef {{ run: (button: HTMLButtonElement, work: () => Promise<void>) => void,
 *   announce: (words: () => string, kind?: 'info' | 'error' | 'success') => void }} Host
 * @typedef {{ reword: () => void }} Panel
 */

/** Checkboxes to pick from, with Select all/none and the count on the Download button. */
class Picker {
  /** @param {string} prefix the checkboxes' id prefix @param {string} legendKey */
  constructor(prefix, legendKey) {
    this.prefix = prefix;
    this.legendKey = legendKey;
    /** @type {Array<{ box: HTMLInputElement, label: HTMLLabelElement, describe: () => Array<Node | string | null> }>} */
    this.rows = [];
    /** How rows listed later start: ticked, unless "Select none" was the last word. */
    this.ticked = true;
    this.pictures = false;
    this.list = el('ol', { class: 'entry-list' });
    this.legend = el('legend', { class: 'visually-hidden' });
    this.fieldset = el('fieldset', { class: 'entries' }, this.legend, this.list);
    this.toggle = el('button', { type: 'button', class: 'small', 'data-action': 'toggle' });
    this.button = el('button', { type: 'button', class: 'primary', 'data-action': 'download-selected' });
    this.toggle.addEventListener('click', () => {
      const all = this.chosen().length !== this.rows.length;
      for (const { box } of this.rows) box.checked = all;
      this.ticked = all;
      this.refresh();
    });
  }

  /**
   * Lists more rows; answers the first new checkbox (to move the keyboard to), if any.
   * @param {Array<{ value: number, describe: () => Array<Node | string | null>, thumbnail?: string }>} items
   * @param {boolean} ticked
   */
  add(items, ticked) {
    // Once one row has a picture, every row keeps its place (an empty one), so the words line up.
    this.pictures ||= items.some((item) => item.thumbnail);
    const added = items.map(({ value, describe, thumbnail }) => {
      const id = `${this.prefix}-${value}`;
      const box = el('input', { type: 'checkbox', id, value: String(value), checked: ticked });
      box.addEventListener('change', () => this.refresh());
      const label = el('label', { for: id });
      label.replaceChildren(...describe().filter((part) => part !== null));
      // The picture is decoration beside the words (which name the row); one that fails leaves its place empty.
      const blank = () => el('span', { class: 'entry-thumb' });
      const thumb = thumbnail
        ? el('img', {
            class: 'entry-thumb',
            src: thumbnail,
            alt: '',
            loading: 'lazy',
            referrerpolicy: 'no-referrer',
            onerror: (/** @type {Event} */ e) => /** @type {HTMLElement} */ (e.target).replaceWith(blank()),
          })
        : this.pictures
          ? blank()
          : null;
      this.list.append(el('li', {}, box, thumb, label));
      this.rows.push({ box, label, describe });
      return box;
    });
    this.refresh();
    return added[0];
  }

  /** The ticked rows' values. */
  chosen() {
    return this.rows.filter((row) => row.box.checked).map((row) => Number(row.box.value));
  }

  /** The counts on the buttons. */
  refresh() {
    const n = this.chosen().length;
    this.button.textContent = t('front:downloadSelected', { count: n });
    this.button.disabled = n === 0;
    this.toggle.textContent = n === this.rows.length ? t('front:selectNone') : t('front:selectAll');
  }

  reword() {
    this.legend.textContent = t(this.legendKey);
    for (const row of this.rows) row.label.replaceChildren(...row.describe().filter((part) => part !== null));
    this.refresh();
  }
}

/**
 * A collection's entries with a checkbox each, its first page at first; "Show more" lists the next
 * pages (ticked as the last Select all/none said), and "Download all" lists the rest before it
 * starts, so that "all" is every entry or, past the server's MAX_COLLECTION_ENTRIES, nothing started
 * and the limit said. `download` gets "all" or the 1-based entry numbers, as the API counts them.
 * @param {HTMLElement} panel @param {any} info the extract answer (the first page)
 * @param {Host & { more: (cursor: string) => Promise<any>, download: (entries: 'all' | number[]) => Promise<void> }} host
 * @returns {Panel}
 */
export function showCollection(panel, info, host) {
  const picker = new Picker('entry', 'front:pickLegend');
  const state = {
    cursor: /** @type {string | undefined} */ (info.collection?.next_cursor),
    truncated: info.collection?.truncated === true,
    total: /** @type {number | undefined} */ (info.collection?.entry_count),
    pages: 1,
  };
  const seen = new Set();
  /** @param {any[]} entries @param {boolean} ticked */
  const list = (entries, ticked) => {
    const fresh = entries.filter((entry) => Number.isInteger(entry?.index) && !seen.has(entry.index));
    for (const entry of fresh) seen.add(entry.index);
    return picker.add(
      fresh.map((entry) => ({
        value: entry.index,
        thumbnail: entry.thumbnail,
        describe: () => [
          entry.title || entry.url,
          typeof entry.duration === 'number' ? el('span', { class: 'muted' }, ` · ${clock(entry.duration)}`) : null,
        ],
      })),
      ticked,
    );
  };
  // Every entry is here and the server's "all" means just these (a site may count more than it lists).
  const whole = () => !state.cursor && !state.truncated && (state.total ?? 0) <= seen.size;

  /** Lists the next page with something new on it (a profile's page may have no video at all). */
  const next = async (/** @type {boolean} */ ticked) => {
    let first;
    while (!first && state.cursor && state.pages < MAX_PAGES) {
      const answer = await host.more(state.cursor);
      state.pages += 1;
      state.cursor = answer.collection?.next_cursor;
      state.truncated ||= answer.collection?.truncated === true;
      if (typeof answer.collection?.entry_count === 'number') state.total = answer.collection.entry_count;
      first = list(answer.entries ?? [], ticked);
    }
    if (state.cursor && state.pages >= MAX_PAGES) {
      // Only a server that ignores its own page bound gets here: stop as if it had said so.
      state.cursor = undefined;
      state.truncated = true;
    }
    reword();
    return first;
  };

  const heading = el('h2', { id: 'choice-title' });
  const about = el('p', { class: 'muted' });
  const hint = el('p', { class: 'hint' });
  const more = el('button', { type: 'button', class: 'small', 'data-action': 'show-more' });
  const all = el('button', { type: 'button', 'data-action': 'download-all' });

  more.addEventListener('click', () =>
    host.run(more, async () => {
      const first = await next(picker.ticked);
      const [shown, total, open] = [seen.size, state.total ?? seen.size, state.total === undefined && state.cursor];
      host.announce(() => (open ? t('front:listedSoFar', { count: shown }) : t('front:listedOf', { shown, total })));
      (first ?? picker.button).focus();
    }),
  );
  all.addEventListener('click', () =>
    host.run(all, async () => {
      while (state.cursor) {
        const shown = seen.size;
        host.announce(() => t('front:listing', { shown }));
        await next(true);
      }
      if (state.truncated) {
        // More than this server takes at once: say so, and leave the choice to the person.
        const max = seen.size;
        host.announce(() => t('front:tooMany', { max }), 'error');
        picker.button.focus();
        return;
      }
      await host.download(whole() ? 'all' : picker.rows.map((row) => Number(row.box.value)));
    }),
  );
  picker.button.addEventListener('click', () => {
    const picked = picker.chosen();
    if (picked.length)
      host.run(picker.button, () => host.download(picked.length === seen.size && whole() ? 'all' : picked));
  });

  function reword() {
    heading.textContent = info.title || t('front:collection');
    const count =
      state.total === undefined && state.cursor
        ? t('front:entriesSoFar', { count: seen.size })
        : t('front:entryCount', { count: state.total ?? seen.size });
    about.textContent = `${t(KINDS[info.collection?.kind] ?? KINDS.playlist)} · ${count}`;
    hint.hidden = !state.cursor && !state.truncated;
    if (state.cursor)
      hint.textContent =
        state.total === undefined
          ? t('front:moreToList', { shown: seen.size })
          : t('front:firstEntries', { shown: seen.size, total: state.total });
    else if (state.truncated)
      hint.textContent =
        state.total !== undefined && state.total > seen.size
          ? t('front:limitOf', { max: seen.size, total: state.total })
          : t('front:limit', { max: seen.size });
    more.textContent = t('front:showMore');
    more.hidden = !state.cursor;
    all.textContent =
      state.total === undefined ? t('front:downloadAllUnknown') : t('front:downloadAll', { count: state.total });
    all.hidden = !state.cursor;
    picker.reword();
  }

  list(info.entries ?? [], true);
  reword();
  panel.replaceChildren(
    heading,
    about,
    hint,
    el('div', { class: 'choice-tools' }, picker.toggle),
    picker.fieldset,
    el('div', { class: 'choice-more' }, more),
    el('div', { class: 'choice-actions' }, picker.button, all),
  );
  panel.hidden = false;
  return { reword };
}

/**
 * A page with several media items (a gallery, a post with several videos): each item with a
 * checkbox, all ticked, so "Download N selected" takes them all and unticking leaves some out.
 * `download` gets the picked items' indexes, from 0 as the API counts them.
 * @param {HTMLElement} panel @param {any} info the extract answer
 * @param {Host & { download: (items: number[]) => Promise<void> }} host
 * @returns {Panel}
 */
export function showItems(panel, info, host) {
  const picker = new Picker('item', 'front:pickItemsLegend');
  const media = /** @type {any[]} */ (info.media ?? []);
  picker.add(
    media.map((item, i) => ({
      value: i,
      thumbnail: item.thumbnail,
      describe: () => {
        // An item's own title when it has one (a post's caption for each picture), else its number.
        const name = item.title && item.title !== info.title ? item.title : t('front:itemNumber', { n: i + 1 });
        const facts = [
          ITEM_TYPES[item.type] ? t(ITEM_TYPES[item.type]) : null,
          typeof item.duration === 'number' ? clock(item.duration) : null,
        ].filter(Boolean);
        return [name, facts.length ? el('span', { class: 'muted' }, ` · ${facts.join(' · ')}`) : null];
      },
    })),
    true,
  );
  const heading = el('h2', { id: 'choice-title' });
  const about = el('p', { class: 'muted' });
  const hint = el('p', { class: 'hint' });
  picker.button.addEventListener('click', () => {
    const picked = picker.chosen();
    if (picked.length) host.run(picker.button, () => host.download(picked));
  });
  function reword() {
    heading.textContent = info.title || t('front:itemsTitle');
    about.textContent = t('front:itemCount', { count: media.length });
    hint.textContent = t('front:itemsHint');
    picker.reword();
  }
  reword();
  panel.replaceChildren(
    heading,
    about,
    hint,
    el('div', { class: 'choice-tools' }, picker.toggle),
    picker.fieldset,
    el('div', { class: 'choice-actions' }, picker.button),
  );
  panel.hidden = false;
  return { reword };
}

/**
 * A live stream: what it is and a Record button. @param {HTMLElement} panel @param {any} info
 * @param {Host & { record: () => Promise<void> }} host
 * @returns {Panel}
 */
export function showLive(panel, info, host) {
  const record = el('button', { type: 'button', class: 'primary', 'data-action': 'record' });
  record.addEventListener('click', () => host.run(record, host.record));
  const heading = el('h2', { id: 'choice-title' });
  const badge = el('span', { class: 'badge live-badge' });
  const hint = el('span');
  function reword() {
    heading.textContent = info.title || t('front:liveTitle');
    badge.textContent = t('front:live');
    hint.textContent = t('front:liveHint');
    record.textContent = t('front:record');
  }
  reword();
  panel.replaceChildren(heading, el('p', {}, badge, ' ', hint), el('div', { class: 'choice-actions' }, record));
  panel.hidden = false;
  return { reword };
}

/** 75 → "1:15". @param {number} seconds */
function clock(seconds) {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}
