// @ts-check
// More options' subtitle choices for one media item: each track saved as it is or converted to
// WebVTT or SRT, and a video of the item saved with chosen languages embedded (a job).
import { el, errorOf, say, send } from './api.js';
import { t } from './i18n.js';

const EMBED_FORMATS = ['mp4', 'webm', 'mkv'];
// What the server can convert and embed: sidecar WebVTT and SRT files and HLS tracks.
const CONVERTIBLE = new Set(['vtt', 'srt', 'hls']);
const FORMAT_LABELS = {
  vtt: 'playground:subs.format.vtt',
  srt: 'playground:subs.format.srt',
  ttml: 'playground:subs.format.ttml',
  hls: 'playground:subs.format.hls',
  dash: 'playground:subs.format.dash',
};

/**
 * @typedef {{ language: string, label?: string, url: string, format: string, auto_generated?: boolean }} Track
 * @typedef {{
 *   itemName: string,
 *   jobName: string,
 *   status: HTMLElement,
 *   videos: { url: string, quality: string }[],
 *   download: (body: Record<string, unknown>, names: { label: string, job: string, fallback: string }, button: HTMLButtonElement) => Promise<void>,
 *   trackJob: (accepted: unknown, label: string) => void,
 * }} SubtitleContext
 */

/**
 * Checkboxes of the item's languages that can be embedded, or null when it has none.
 * @param {{ index: number, subtitles?: Track[] }} item @param {string} label
 * @returns {{ node: HTMLElement, chosen: () => string[] } | null}
 */
export function languageChoices(item, label) {
  const languages = [
    ...new Set((item.subtitles ?? []).filter((t) => CONVERTIBLE.has(t.format)).map((t) => t.language)),
  ];
  if (languages.length === 0) return null;
  const boxes = languages.map((lang) =>
    el(
      'label',
      { class: 'check' },
      el('input', { type: 'checkbox', name: 'subtitles', value: lang }),
      ' ',
      el('span', { translate: 'no' }, lang),
    ),
  );
  const node = el(
    'div',
    { class: 'languages', role: 'group', 'aria-label': label },
    el('span', { class: 'languages-label', 'aria-hidden': 'true' }, t('playground:subs.choicesLabel', { label })),
    ...boxes,
  );
  const chosen = () =>
    [...node.querySelectorAll('input[name="subtitles"]:checked')].map(
      (box) => /** @type {HTMLInputElement} */ (box).value,
    );
  return { node, chosen };
}

const trackName = (/** @type {Track} */ track) =>
  track.auto_generated
    ? t('playground:subs.automaticName', { name: track.label || track.language })
    : track.label || track.language;

/** The subtitles block of an item, or null when it has no tracks. @param {{ index: number, subtitles?: Track[] }} item @param {SubtitleContext} ctx */
export function renderSubtitles(item, ctx) {
  const tracks = item.subtitles ?? [];
  if (tracks.length === 0) return null;
  const rows = tracks.map((t, i) => trackRow(t, `sub-${item.index}-${i}`, ctx));
  const table = el(
    'table',
    { class: 'sources subtitle-tracks' },
    el('caption', { class: 'visually-hidden' }, t('playground:subs.of', { name: ctx.itemName })),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...[t('playground:subs.col.language'), t('playground:subs.col.name'), t('playground:format')].map((h) =>
          el('th', { scope: 'col' }, h),
        ),
        el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, t('playground:col.actions'))),
      ),
    ),
    el('tbody', {}, ...rows),
  );
  const choices = languageChoices(item, t('playground:subs.toEmbed'));
  return el(
    'section',
    { class: 'subtitles', 'aria-label': t('playground:subs.of', { name: ctx.itemName }) },
    el('h4', {}, t('playground:subs.title')),
    el('div', { class: 'table-wrap' }, table),
    choices && ctx.videos.length ? embedForm(item.index, choices, ctx) : null,
  );
}

/** @param {Track} track @param {string} id @param {SubtitleContext} ctx */
function trackRow(track, id, ctx) {
  const name = trackName(track);
  const actions = el('td', { class: 'actions' });
  if (track.format === 'dash') {
    actions.append(el('span', { class: 'muted' }, t('playground:subs.dashOnly')));
  } else {
    // A file can be saved as it is; an HLS track is always joined into a file, as WebVTT by default.
    const choices =
      track.format === 'hls'
        ? ['vtt', 'srt']
        : track.format === 'ttml'
          ? ['']
          : ['', ...['vtt', 'srt'].filter((f) => f !== track.format)];
    const format = el(
      'select',
      { id: `${id}-format`, 'aria-label': t('playground:subs.formatLabel', { name }) },
      ...choices.map((f) =>
        el('option', { value: f }, f ? t('playground:subs.as', { format: f }) : t('playground:subs.asIs')),
      ),
    );
    const button = /** @type {HTMLButtonElement} */ (
      el(
        'button',
        { type: 'button', class: 'small', 'aria-label': t('playground:subs.downloadLabel', { name }) },
        t('playground:source.download'),
      )
    );
    button.addEventListener('click', () => {
      const body = { url: track.url };
      const chosen = /** @type {HTMLSelectElement} */ (format).value;
      if (chosen) body.format = chosen;
      const ext = chosen || (track.format === 'hls' ? 'vtt' : track.format);
      ctx.download(
        body,
        {
          label: t('playground:subs.label', { name }),
          job: t('playground:subs.job', { name, item: ctx.jobName }),
          fallback: `subtitles.${track.language}.${ext}`,
        },
        button,
      );
    });
    if (choices.length > 1) actions.append(format);
    actions.append(button);
  }
  return el(
    'tr',
    {},
    el('th', { scope: 'row' }, el('code', {}, track.language)),
    el(
      'td',
      { 'data-label': t('playground:subs.col.name') },
      track.label ? el('span', { translate: 'no' }, track.label) : t('common:none'),
      track.auto_generated ? el('span', { class: 'muted block' }, t('playground:subs.automatic')) : null,
    ),
    el(
      'td',
      { 'data-label': t('playground:format') },
      FORMAT_LABELS[track.format] ? t(FORMAT_LABELS[track.format]) : track.format,
    ),
    actions,
  );
}

/** A form that saves a video source of the item with the checked languages embedded. */
function embedForm(index, choices, /** @type {SubtitleContext} */ ctx) {
  const id = (part) => `embed-${index}-${part}`;
  const video = el(
    'select',
    { id: id('video'), name: 'url' },
    ...ctx.videos.map((s) => el('option', { value: s.url }, s.quality)),
  );
  const format = el(
    'select',
    { id: id('format'), name: 'format' },
    el('option', { value: '' }, t('playground:automatic')),
    ...EMBED_FORMATS.map((f) => el('option', { value: f }, f)),
  );
  const button = /** @type {HTMLButtonElement} */ (
    el('button', { type: 'submit', class: 'primary' }, t('playground:subs.embedButton'))
  );
  const field = (text, control) => el('div', { class: 'field' }, el('label', { for: control.id }, text), control);
  const form = el(
    'form',
    { class: 'merge embed' },
    el(
      'fieldset',
      {},
      el('legend', {}, t('playground:subs.embedTitle')),
      el('p', { class: 'hint' }, t('playground:subs.embedHint')),
      choices.node,
      el(
        'div',
        { class: 'merge-fields' },
        field(t('playground:video'), video),
        field(t('playground:format'), format),
        button,
      ),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = choices.chosen();
    if (chosen.length === 0) {
      say(ctx.status, t('playground:subs.chooseOne'), 'error');
      return;
    }
    const body = { url: /** @type {HTMLSelectElement} */ (video).value, subtitles: chosen };
    if (/** @type {HTMLSelectElement} */ (format).value) body.format = /** @type {HTMLSelectElement} */ (format).value;
    button.disabled = true;
    try {
      const res = await send('/api/v1/download', { method: 'POST', body });
      if (res.status !== 202) throw await errorOf(res);
      ctx.trackJob(
        (await res.json()).data,
        t('playground:subs.embedJob', { name: ctx.jobName, languages: chosen.join(', ') }),
      );
    } catch (err) {
      say(ctx.status, err.message, 'error');
    } finally {
      button.disabled = false;
    }
  });
  return form;
}
