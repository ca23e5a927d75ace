// @ts-check
// More options on a collection (a playlist, channel, feed or profile): its entries, a page at a time
// ("Show more" follows the server's cursor until its last page or its MAX_COLLECTION_ENTRIES), each
// with Open, which extracts that entry here to show its sources; and a link that hands the whole
// collection to the front page, whose checklist downloads several entries at once as one ZIP.
import { el } from './api.js';
import { formatDate, formatNumber, t } from './i18n.js';

const KINDS = {
  playlist: 'playground:collection.playlist',
  channel: 'playground:collection.channel',
  feed: 'playground:collection.feed',
  profile: 'playground:collection.profile',
};

/** "1:02" or "1:02:03". @param {number} seconds */
function clock(seconds) {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/**
 * The collection's card. `more` fetches the page after a cursor (POST /api/playground with it),
 * `open` extracts an entry's URL here, `run` does work with a button busy (its failure said in the
 * page's status line), `announce` says something there.
 * @param {any} data the extract answer (its first page)
 * @param {{ more: (cursor: string) => Promise<any>, open: (url: string) => void,
 *   run: (button: HTMLButtonElement, work: () => Promise<void>) => void, announce: (words: string) => void }} host
 * @returns {{ node: HTMLElement, reword: () => void }}
 */
export function collectionCard(data, host) {
  const state = {
    cursor: /** @type {string | undefined} */ (data.collection?.next_cursor),
    truncated: data.collection?.truncated === true,
    total: /** @type {number | undefined} */ (data.collection?.entry_count),
  };
  /** @type {Array<{ entry: any, row: HTMLElement }>} */
  const rows = [];
  const seen = new Set();
  const list = el('ol', { class: 'collection-entries' });
  const about = el('p', { class: 'muted' });
  const hint = el('p', { class: 'hint' });
  const limit = el('p', { class: 'hint' });
  const more = el('button', { type: 'button', class: 'small', 'data-action': 'show-more' });
  const front = el('a', { class: 'button primary', href: `/?u=${encodeURIComponent(data.url)}` });

  /** One entry: its title and facts, and Open. @param {any} entry */
  const row = (entry) => {
    const item = el('li', { 'data-index': entry.index });
    rows.push({ entry, row: item });
    fill(entry, item);
    return item;
  };
  /** @param {any} entry @param {HTMLElement} item */
  const fill = (entry, item) => {
    const name = entry.title || entry.url;
    const facts = [
      t('playground:collection.number', { n: formatNumber(entry.index) }),
      typeof entry.duration === 'number' ? clock(entry.duration) : null,
      entry.upload_date
        ? formatDate(new Date(`${entry.upload_date}T00:00:00Z`), { dateStyle: 'medium', timeZone: 'UTC' })
        : null,
    ].filter(Boolean);
    const open = el(
      'button',
      {
        type: 'button',
        class: 'small',
        'data-action': 'open',
        'aria-label': t('playground:collection.openLabel', { name }),
      },
      t('playground:collection.open'),
    );
    open.addEventListener('click', () => host.open(entry.url));
    item.replaceChildren(
      el(
        'div',
        { class: 'entry-words' },
        el('strong', { translate: entry.title ? 'no' : null }, name),
        el('span', { class: 'muted block' }, facts.join(' · ')),
      ),
      open,
    );
  };
  /** Lists entries not listed yet; answers the first new row's Open button. @param {any[]} entries */
  const add = (entries) => {
    const fresh = entries.filter((entry) => Number.isInteger(entry?.index) && !seen.has(entry.index));
    for (const entry of fresh) seen.add(entry.index);
    const added = fresh.map(row);
    list.append(...added);
    return /** @type {HTMLElement | undefined} */ (added[0]?.querySelector('button'));
  };

  more.addEventListener('click', () =>
    host.run(more, async () => {
      let first;
      // A page may hold nothing new (a profile's page without video): go on to one that does.
      while (!first && state.cursor) {
        const page = await host.more(state.cursor);
        state.cursor = page.collection?.next_cursor;
        state.truncated ||= page.collection?.truncated === true;
        if (typeof page.collection?.entry_count === 'number') state.total = page.collection.entry_count;
        first = add(page.entries ?? []);
      }
      reword();
      host.announce(
        state.total === undefined
          ? t('playground:collection.listedSoFar', { count: seen.size, n: formatNumber(seen.size) })
          : t('playground:collection.listedOf', { shown: formatNumber(seen.size), total: formatNumber(state.total) }),
      );
      (first ?? front).focus();
    }),
  );

  function reword() {
    const kind = t(KINDS[data.collection?.kind] ?? KINDS.playlist);
    const count = state.total ?? seen.size;
    about.textContent =
      state.total === undefined && state.cursor
        ? t('playground:collection.aboutSoFar', { kind, count: seen.size, n: formatNumber(seen.size) })
        : t('playground:collection.about', { kind, count, n: formatNumber(count) });
    hint.textContent = t('playground:collection.hint');
    front.textContent = t('playground:collection.toFront');
    more.textContent = t('playground:collection.showMore');
    more.hidden = !state.cursor;
    limit.hidden = state.cursor !== undefined || !state.truncated;
    limit.textContent =
      state.total !== undefined && state.total > seen.size
        ? t('playground:collection.limitOf', { max: formatNumber(seen.size), total: formatNumber(state.total) })
        : t('playground:collection.limit', { max: formatNumber(seen.size) });
  }

  add(data.entries ?? []);
  reword();
  const node = el(
    'section',
    { class: 'card collection', 'aria-labelledby': 'collection-title' },
    el('h3', { id: 'collection-title' }, t('playground:collection.entries')),
    about,
    el('div', { class: 'collection-front' }, hint, front),
    list,
    limit,
    more,
  );
  const retitle = () => {
    /** @type {HTMLElement} */ (node.querySelector('#collection-title')).textContent = t(
      'playground:collection.entries',
    );
  };
  return {
    node,
    reword: () => {
      retitle();
      reword();
      // The rows are drawn again: the keyboard stays on the entry it was on.
      const focused = rows.find(({ row: item }) => item.contains(document.activeElement));
      for (const { entry, row: item } of rows) fill(entry, item);
      /** @type {HTMLElement | null | undefined} */ (focused?.row.querySelector('button'))?.focus();
    },
  };
}
