// @ts-check
// More options (/advanced): extract a URL, list its media and sources (or a collection's entries:
// collection.js), download a source (progressive files are saved straight from the response; HLS/DASH
// become jobs), merge a video-only with an audio-only source, convert a source to another format or to
// audio only, cut a clip of an item (clip.js), save or embed subtitles (subtitles.js), and follow each
// job until its artifact can be saved.
import { ApiError, api, controlHeaders, el, errorOf, formatBytes, say, send } from './api.js';
import { LANGUAGE_EVENT, formatDate, formatNumber, ready, t } from './i18n.js';
import { clipBox } from './clip.js';
import { collectionCard } from './collection.js';
import { filenameFrom } from './disposition.js';
import { languageChoices, renderSubtitles } from './subtitles.js';

const form = /** @type {HTMLFormElement} */ (document.getElementById('extract-form'));
const urlInput = /** @type {HTMLInputElement} */ (document.getElementById('url'));
const extractButton = /** @type {HTMLButtonElement} */ (document.getElementById('extract-button'));
const status = /** @type {HTMLElement} */ (document.getElementById('status'));
const result = /** @type {HTMLElement} */ (document.getElementById('result'));
const jobsSection = /** @type {HTMLElement} */ (document.getElementById('jobs'));
const jobList = /** @type {HTMLElement} */ (document.getElementById('job-list'));

// Catalog keys of the stream profiles: as a heading, and inside a sentence ("720p video only").
const PROFILE_LABELS = {
  muxed_progressive: 'playground:profile.muxed_progressive',
  video_only: 'playground:profile.video_only',
  audio_only: 'playground:profile.audio_only',
  image: 'playground:profile.image',
  hls: 'playground:profile.hls',
  dash: 'playground:profile.dash',
};
const PROFILE_INLINE = {
  muxed_progressive: 'playground:profileInline.muxed_progressive',
  video_only: 'playground:profileInline.video_only',
  audio_only: 'playground:profileInline.audio_only',
  image: 'playground:profileInline.image',
  hls: 'playground:profileInline.hls',
  dash: 'playground:profileInline.dash',
};
const ITEM_TYPES = { video: 'playground:type.video', audio: 'playground:type.audio', image: 'playground:type.image' };
const SEGMENTED = new Set(['hls', 'dash']);
const MERGE_FORMATS = ['mp4', 'webm', 'mkv'];
const AUDIO_FORMATS = ['mp3', 'm4a', 'opus', 'wav'];
const POLL_MS = 1000;

const profileLabel = (source) =>
  PROFILE_LABELS[source.stream_profile] ? t(PROFILE_LABELS[source.stream_profile]) : source.stream_profile;
/** "720p video only": how sentences and labels name a source. */
const sourceName = (source) =>
  t('playground:sourceName', {
    quality: source.quality,
    profile: PROFILE_INLINE[source.stream_profile] ? t(PROFILE_INLINE[source.stream_profile]) : source.stream_profile,
  });
// A merge pair is one video and one audio source of the same item (DESIGN.md, invalid_merge_pair).
const isVideoOnly = (s) =>
  s.stream_profile === 'video_only' ||
  (SEGMENTED.has(s.stream_profile) && s.has_video === true && s.has_audio === false);
const isAudioOnly = (s) =>
  s.stream_profile === 'audio_only' || (SEGMENTED.has(s.stream_profile) && s.has_video === false);
// A stream that does not say (a media playlist without CODECS) may have sound: offer audio formats.
const hasAudio = (s) =>
  isAudioOnly(s) ||
  s.stream_profile === 'muxed_progressive' ||
  (SEGMENTED.has(s.stream_profile) && s.has_audio !== false);

/** Extracts through the keyless surface A route (a collection's later pages by their cursor). */
function extract(url, cursor = undefined) {
  return api('/api/playground', { method: 'POST', body: cursor ? { url, cursor } : { url } });
}

function validUrl(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  await ready.catch(() => undefined); // (a shared link may be sent before the words are loaded)
  const url = urlInput.value.trim();
  if (!validUrl(url)) {
    urlInput.setAttribute('aria-invalid', 'true');
    say(status, t('playground:url.invalid'), 'error');
    urlInput.focus();
    return;
  }
  urlInput.removeAttribute('aria-invalid');
  extractButton.disabled = true;
  extractButton.textContent = t('playground:extracting');
  result.setAttribute('aria-busy', 'true');
  say(status, t('playground:looking'));
  try {
    const data = await extract(url);
    renderResult(data);
    say(status, foundText(data), 'success');
  } catch (err) {
    result.hidden = true;
    say(status, err.message, 'error');
  } finally {
    extractButton.disabled = false;
    extractButton.textContent = t('playground:extract');
    result.removeAttribute('aria-busy');
  }
});

/** What the status line says about an extract: its media items, or a collection's entries. */
function foundText(data) {
  if (data.content_type !== 'collection') {
    const count = data.media.length;
    return t('playground:found', { count, n: formatNumber(count), title: data.title });
  }
  const count = data.collection?.entry_count ?? data.entries?.length ?? 0;
  return t('playground:collection.found', { count, n: formatNumber(count), title: data.title });
}

/** A term and its value; the value is the API's own word (translate="no": not ours to translate). */
function fact(term, value) {
  return el('div', {}, el('dt', {}, term), el('dd', { translate: 'no' }, value));
}

function formatDuration(seconds) {
  if (typeof seconds !== 'number') return null;
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** The shown result's extraction: downloads name it, so they get its page's title and headers. */
let extractionId;
/** The shown result, drawn again in another language. */
let shown = null;
/** A shown collection's entries: kept (with the pages listed) and worded again in another language. */
let collection = null;

/** Extracts `url` as if typed: More options on a collection entry's Open. */
function openHere(url) {
  urlInput.value = url;
  form.requestSubmit();
  urlInput.focus();
}

/** Runs `work` with `button` busy; its failure is said in the status line. */
async function busy(button, work) {
  button.disabled = true;
  try {
    await work();
  } catch (err) {
    say(status, err.message, 'error');
  } finally {
    button.disabled = false;
  }
}

function renderResult(data) {
  extractionId = data.extraction_id;
  shown = data;
  collection = null;
  if (data.content_type === 'collection') {
    collection = collectionCard(data, {
      more: async (cursor) => {
        const page = await extract(data.url, cursor);
        if (page?.content_type !== 'collection') throw new Error(t('playground:collection.unexpected'));
        return page;
      },
      open: openHere,
      run: busy,
      announce: (words) => say(status, words, 'success'),
    });
    result.replaceChildren(resultHead(data), collection.node);
  } else result.replaceChildren(resultHead(data), ...data.media.map((item) => renderItem(item, data)));
  result.hidden = false;
}

/** The result's title, its facts and its address. */
function resultHead(data) {
  return el(
    'header',
    { class: 'card result-head' },
    el('h2', { id: 'result-title', translate: 'no' }, data.title),
    el(
      'dl',
      { class: 'facts' },
      fact(t('playground:fact.platform'), data.platform),
      fact(t('playground:fact.profile'), data.extract_profile),
      fact(t('playground:fact.content'), data.content_type),
      data.content_type === 'collection' ? null : fact(t('playground:fact.items'), formatNumber(data.media.length)),
    ),
    el(
      'p',
      { class: 'source-link', translate: 'no' },
      el('a', { href: data.url, rel: 'noopener noreferrer', target: '_blank' }, data.url),
    ),
  );
}

function renderItem(item, data) {
  const n = item.index + 1;
  const titleId = `item-${item.index}-title`;
  const count = data.media.length;
  const name = item.title || (count > 1 ? t('playground:itemN', { n: formatNumber(n) }) : t('playground:media'));
  // Job labels outlive the result on screen, so they carry the page title.
  const jobName = count > 1 ? `${data.title} (${name})` : data.title;
  const type = ITEM_TYPES[item.type] ? t(ITEM_TYPES[item.type]) : item.type;
  const details = [
    type,
    formatDuration(item.duration),
    t('playground:sourceCount', { count: item.sources.length, n: formatNumber(item.sources.length) }),
  ]
    .filter(Boolean)
    .join(' · ');
  const thumb = item.thumbnail
    ? el('img', {
        class: 'thumb',
        src: item.thumbnail,
        alt: t('playground:thumbnail', { name }),
        loading: 'lazy',
        referrerpolicy: 'no-referrer',
        onerror: (e) => e.target.replaceWith(placeholder(item.type)),
      })
    : placeholder(item.type);

  // Images cannot be cut; anything else shares the item's clip range.
  const clip = item.sources.some((s) => s.stream_profile !== 'image') ? clipBox(item) : null;
  const rows = item.sources.map((source) => renderSource(source, name, jobName, clip));
  const table = el(
    'table',
    { class: 'sources' },
    el('caption', { class: 'visually-hidden' }, t('playground:sourcesCaption', { name })),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...[
          t('playground:col.quality'),
          t('playground:col.profile'),
          t('playground:col.size'),
          t('playground:col.codecs'),
        ].map((h) => el('th', { scope: 'col' }, h)),
        el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, t('playground:col.actions'))),
      ),
    ),
    el('tbody', {}, ...rows),
  );
  const videos = item.sources.filter(isVideoOnly);
  const audios = item.sources.filter(isAudioOnly);
  const subtitles = renderSubtitles(item, {
    itemName: name,
    jobName,
    status,
    videos: item.sources.filter((s) => s.stream_profile !== 'image' && !isAudioOnly(s)),
    download: (body, names, button) => download(body, names, button, null, null),
    trackJob,
  });
  return el(
    'article',
    { class: 'card media-item', 'aria-labelledby': titleId },
    el(
      'div',
      { class: 'media-head' },
      thumb,
      el(
        'div',
        {},
        el('h3', { id: titleId, translate: item.title ? 'no' : null }, name),
        el('p', { class: 'muted' }, details),
      ),
    ),
    clip ? el('div', { class: 'item-choices' }, clip.node, renderAudio(item, name, jobName, clip)) : null,
    el('div', { class: 'table-wrap' }, table),
    videos.length && audios.length ? renderMerge(item, jobName, videos, audios, clip) : null,
    subtitles,
  );
}

function placeholder(type) {
  return el(
    'div',
    { class: 'thumb thumb-empty', 'aria-hidden': 'true' },
    type === 'audio' ? '♪' : type === 'image' ? '▣' : '▶',
  );
}

/** The clip to send: undefined for none, false when the range is wrong (the clip box says why). */
function clipOf(clip) {
  const range = clip?.read();
  return range === false ? false : (range ?? undefined);
}

/**
 * Audio only for the item, where the API can write it: its best audio-only source, else its best
 * source with sound converted to an audio format. Null when no source has sound.
 */
function renderAudio(item, itemName, jobName, clip) {
  const source = item.sources.find(isAudioOnly) ?? item.sources.find(hasAudio);
  if (!source) return null;
  const id = (part) => `audio-${item.index}-${part}`;
  const from = sourceName(source);
  const format = el(
    'select',
    { id: id('format'), 'aria-describedby': id('hint') },
    ...AUDIO_FORMATS.map((f) => el('option', { value: f }, f)),
  );
  const button = el('button', { type: 'button', 'aria-describedby': id('hint') }, t('playground:audio.save'));
  button.addEventListener('click', () => {
    const range = clipOf(clip);
    if (range === false) return;
    const body = { url: source.url, format: format.value, clip: range };
    const job =
      t('playground:audio.job', { name: jobName, format: body.format }) + (range ? ` (${clip.label(range)})` : '');
    download(
      body,
      { label: t('playground:audio.label', { name: itemName }), job, fallback: `audio.${body.format}` },
      button,
      null,
      clip,
    );
  });
  return el(
    'fieldset',
    { class: 'audio-only' },
    el('legend', {}, t('playground:audio.title')),
    el(
      'p',
      { id: id('hint'), class: 'hint' },
      t(isAudioOnly(source) ? 'playground:audio.hint' : 'playground:audio.hintPicture', { source: from }),
    ),
    el('label', { for: id('format') }, t('playground:format')),
    el('div', { class: 'input-row' }, format, button),
  );
}

function renderSource(source, itemName, jobName, clip) {
  const dims = source.width && source.height ? `${source.width}×${source.height}` : null;
  const label = sourceName(source);
  const progress = el('progress', {
    class: 'row-progress',
    max: 100,
    hidden: true,
    'aria-label': t('playground:source.progress', { source: label }),
  });
  // A live source is recorded (operation record) until it ends or the job's Stop button is pressed.
  const live = source.is_live === true;
  const button = el(
    'button',
    {
      type: 'button',
      class: 'small',
      'aria-label': t(live ? 'playground:source.recordLabel' : 'playground:source.downloadLabel', {
        source: label,
        name: itemName,
      }),
    },
    t(live ? 'playground:source.record' : 'playground:source.download'),
  );
  // Any source may be converted (a job): audio formats from anything with sound, video formats from video.
  const video = source.stream_profile !== 'image' && !isAudioOnly(source);
  const audio = hasAudio(source);
  const option = (f, note) =>
    el('option', { value: f }, note ? t('playground:source.formatNote', { format: f, note }) : f);
  const format =
    !live && (video || audio)
      ? el(
          'select',
          { class: 'small', 'aria-label': t('playground:source.formatLabel', { source: label, name: itemName }) },
          el(
            'option',
            { value: '' },
            t(SEGMENTED.has(source.stream_profile) ? 'playground:automatic' : 'playground:original'),
          ),
          video ? el('optgroup', { label: t('playground:video') }, ...MERGE_FORMATS.map((f) => option(f))) : null,
          audio
            ? el(
                'optgroup',
                { label: t('playground:audio.title') },
                ...AUDIO_FORMATS.map((f) => option(f, video ? t('playground:audio.note') : null)),
              )
            : null,
        )
      : null;
  button.addEventListener('click', () => {
    if (live) {
      download(
        { url: source.url, live: {} },
        { label, job: t('playground:source.recordJob', { name: jobName }), fallback: 'recording.mp4' },
        button,
        progress,
        clip,
      );
      return;
    }
    const range = source.stream_profile === 'image' ? undefined : clipOf(clip);
    if (range === false) return;
    const body = { url: source.url, clip: range };
    if (format?.value) body.format = format.value;
    const job =
      t(body.format ? 'playground:source.jobAs' : 'playground:source.job', {
        source: label,
        name: jobName,
        format: body.format,
      }) + (range ? ` (${clip.label(range)})` : '');
    const names = { label, job, fallback: `download${source.ext ? `.${source.ext}` : ''}` };
    download(body, names, button, progress, clip);
  });
  return el(
    'tr',
    {},
    el(
      'th',
      { scope: 'row' },
      el('span', { translate: 'no' }, source.quality),
      dims ? el('span', { class: 'muted block' }, dims) : null,
    ),
    el(
      'td',
      { 'data-label': t('playground:col.profile') },
      profileLabel(source),
      source.ext ? el('span', { class: 'muted' }, ` · ${source.ext}`) : null,
      SEGMENTED.has(source.stream_profile) ? el('span', { class: 'muted block' }, t('playground:source.byJob')) : null,
    ),
    el('td', { 'data-label': t('playground:col.size') }, formatBytes(source.size)),
    el(
      'td',
      { 'data-label': t('playground:col.codecs') },
      source.codecs ? el('code', {}, source.codecs) : t('common:none'),
    ),
    el('td', { class: 'actions' }, format, button, progress),
  );
}

function renderMerge(item, name, videos, audios, clip) {
  const id = (part) => `merge-${item.index}-${part}`;
  const option = (s) =>
    el(
      'option',
      { value: s.url },
      [s.quality, profileLabel(s), s.size ? formatBytes(s.size) : null].filter(Boolean).join(' · '),
    );
  const video = el('select', { id: id('video'), name: 'video_url' }, ...videos.map(option));
  const audio = el('select', { id: id('audio'), name: 'audio_url' }, ...audios.map(option));
  const format = el(
    'select',
    { id: id('format'), name: 'format' },
    el('option', { value: '' }, t('playground:automatic')),
    ...MERGE_FORMATS.map((f) => el('option', { value: f }, f)),
  );
  const button = el('button', { type: 'submit', class: 'primary' }, t('playground:merge.button'));
  const field = (labelText, control) =>
    el('div', { class: 'field' }, el('label', { for: control.id }, labelText), control);
  const subtitles = languageChoices(item, t('playground:merge.subtitles'));
  const mergeForm = el(
    'form',
    { class: 'merge' },
    el(
      'fieldset',
      {},
      el('legend', {}, t('playground:merge.title')),
      el('p', { class: 'hint' }, t('playground:merge.hint')),
      subtitles?.node ?? null,
      el(
        'div',
        { class: 'merge-fields' },
        field(t('playground:video'), video),
        field(t('playground:audio'), audio),
        field(t('playground:format'), format),
        button,
      ),
    ),
  );
  mergeForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const range = clipOf(clip);
    if (range === false) return;
    const body = { video_url: video.value, audio_url: audio.value, clip: range };
    if (format.value) body.format = format.value;
    const languages = subtitles?.chosen() ?? [];
    if (languages.length) body.subtitles = languages;
    if (range && languages.length) {
      // The server refuses it too (the tracks would drift from the cut); say so before asking.
      clip.show(t('playground:clip.noSubtitles'));
      return;
    }
    button.disabled = true;
    try {
      const res = await send('/api/v1/download', { method: 'POST', body: { ...body, extraction_id: extractionId } });
      if (res.status !== 202) throw await errorOf(res);
      trackJob((await res.json()).data, t('playground:merge.job', { name }) + (range ? ` (${clip.label(range)})` : ''));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'invalid_clip') clip?.show(err.message);
      say(status, err.message, 'error');
    } finally {
      button.disabled = false;
    }
  });
  return mergeForm;
}

/**
 * POSTs a download: a 200 is saved from the response, a 202 becomes a job in the list. `names` says
 * what to call it in messages and the job list, and the file name when the server gives none.
 */
async function download(body, names, button, progress, clip) {
  button.disabled = true;
  say(status, t('playground:starting', { name: names.label }));
  try {
    // The sources as this page's extract returned them (its title and headers), not another page's.
    const res = await send('/api/v1/download', { method: 'POST', body: { ...body, extraction_id: extractionId } });
    if (res.status === 202) {
      trackJob((await res.json()).data, names.job);
      return;
    }
    if (!res.ok) throw await errorOf(res);
    const filename = filenameFrom(res.headers.get('Content-Disposition')) ?? names.fallback;
    if (progress) progress.hidden = false;
    const blob = await readBody(res, (fraction) => {
      if (!progress) return;
      if (fraction === null) progress.removeAttribute('value');
      else progress.value = Math.round(fraction * 100);
    });
    saveBlob(blob, filename);
    say(status, t('playground:saved', { file: filename, size: formatBytes(blob.size) }), 'success');
  } catch (err) {
    // The server's own words on a refused range, beside the fields that set it.
    if (err instanceof ApiError && err.code === 'invalid_clip') clip?.show(err.message);
    say(status, err.message, 'error');
  } finally {
    button.disabled = false;
    if (progress) progress.hidden = true;
  }
}

/**
 * Reads a response into a Blob, reporting progress when the length is known. The whole file is held
 * in memory: /api/v1/download takes JSON, so a plain navigation cannot stream it to disk.
 */
async function readBody(res, onProgress) {
  const total = Number(res.headers.get('Content-Length')) || 0;
  const type = res.headers.get('Content-Type') ?? 'application/octet-stream';
  if (!res.body) return res.blob();
  const reader = res.body.getReader();
  const parts = [];
  let received = 0;
  onProgress(total ? 0 : null);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    received += value.byteLength;
    if (total) onProgress(Math.min(received / total, 1));
  }
  return new Blob(parts, { type });
}

function saveBlob(blob, filename) {
  const href = URL.createObjectURL(blob);
  const link = el('a', { href, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started saving by now; keep the URL a little longer for slow disks.
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

const STATUS_TEXT = {
  queued: 'playground:job.queued',
  processing: 'playground:job.processing',
  completed: 'playground:job.completed',
  failed: 'playground:job.failed',
  expired: 'playground:job.expired',
  cancelled: 'playground:job.cancelled',
};
const BADGES = {
  queued: 'playground:badge.queued',
  processing: 'playground:badge.processing',
  completed: 'playground:badge.completed',
  failed: 'playground:badge.failed',
  expired: 'playground:badge.expired',
  cancelled: 'playground:badge.cancelled',
};
const statusText = (status) => (STATUS_TEXT[status] ? t(STATUS_TEXT[status]) : status);
const badgeText = (status) => (BADGES[status] ? t(BADGES[status]) : status);

/** Adds a job to the list and polls it until it ends. `accepted` is the 202 body's data. */
function trackJob(accepted, label) {
  jobsSection.hidden = false;
  const existing = jobList.querySelector(`[data-job-id="${CSS.escape(accepted.job_id)}"]`);
  if (existing) {
    say(status, t('playground:job.already', { name: label }));
    existing.scrollIntoView({ block: 'nearest' });
    return;
  }
  const id = `job-${jobList.children.length + 1}`;
  const badge = el('span', { class: 'badge', 'data-status': accepted.status }, badgeText(accepted.status));
  const progress = el('progress', {
    max: 100,
    value: 0,
    'aria-labelledby': `${id}-label`,
    'aria-describedby': `${id}-status`,
  });
  const percent = el('span', { class: 'percent', 'aria-hidden': 'true' }, '0%');
  const statusLine = el(
    'p',
    { id: `${id}-status`, class: 'job-status', 'aria-live': 'polite' },
    statusText(accepted.status),
  );
  const actions = el('div', { class: 'job-actions' });
  const item = el(
    'li',
    { class: 'card job', 'data-job-id': accepted.job_id },
    el('div', { class: 'job-head' }, el('strong', { id: `${id}-label` }, label), badge),
    el('div', { class: 'progress-row' }, progress, percent),
    statusLine,
    actions,
  );
  jobList.prepend(item);
  const started = t('playground:job.started', { name: label });
  say(status, started);

  // Cancel (DELETE /api/v1/jobs/{id}) while the job is queued or processing; the poll shows the end.
  const cancel = el(
    'button',
    { type: 'button', class: 'small', 'aria-label': t('playground:job.cancelLabel', { name: label }) },
    t('common:cancel'),
  );
  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await api(accepted.status_url, { method: 'DELETE', headers: controlHeaders(accepted.control_token) });
      statusLine.textContent = statusText('cancelled');
      statusLine.dataset.kind = 'info';
      cancel.remove();
    } catch (err) {
      statusLine.textContent = err.message;
      statusLine.dataset.kind = 'error';
      cancel.disabled = false;
    }
  });
  actions.append(cancel);

  let failures = 0;
  let lastStatus = '';
  const poll = async () => {
    let job;
    try {
      job = await api(accepted.status_url);
      failures = 0;
    } catch (err) {
      failures += 1;
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) {
        statusLine.textContent = err.message;
        statusLine.dataset.kind = 'error';
        return;
      }
      statusLine.textContent = failures < 5 ? t('playground:job.retrying', { message: err.message }) : err.message;
      statusLine.dataset.kind = 'error';
      if (failures < 5) setTimeout(poll, POLL_MS * 2 ** failures);
      return;
    }
    if (job.operation === 'record' && job.status === 'processing')
      showRecording(job, accepted, actions, statusLine, label);
    const value = Math.round(job.status === 'completed' ? 100 : (job.progress ?? 0));
    progress.value = value;
    percent.textContent = formatNumber(value / 100, { style: 'percent' });
    badge.textContent = badgeText(job.status);
    badge.dataset.status = job.status;
    if (job.status !== lastStatus) {
      lastStatus = job.status;
      statusLine.dataset.kind = job.status === 'failed' ? 'error' : job.status === 'completed' ? 'success' : 'info';
      statusLine.textContent =
        job.status === 'failed' && job.error
          ? t('playground:job.failedBecause', { message: job.error.message })
          : statusText(job.status);
      if (job.status === 'completed' && job.recording)
        statusLine.textContent = t('playground:job.recorded', {
          seconds: formatNumber(Math.round(job.recording.seconds)),
          ended: job.ended,
        });
      if (job.status === 'completed' && job.artifact) showArtifact(actions, job.artifact);
      // The page's status line still saying "job started" would be wrong once the job has ended.
      if (status.textContent === started && (job.status === 'completed' || job.status === 'failed')) {
        say(
          status,
          job.status === 'completed'
            ? t('playground:job.doneStatus', { name: label })
            : t('playground:job.failedStatus', { name: label, message: job.error?.message ?? '' }),
          job.status === 'completed' ? 'success' : 'error',
        );
      }
    }
    if (job.status === 'queued' || job.status === 'processing') setTimeout(poll, POLL_MS);
    else {
      cancel.remove();
      actions.querySelector('[data-stop]')?.remove();
    }
  };
  poll();
}

/** A recording in progress: how much it has, and a Stop button (POST …/stop keeps what was recorded). */
function showRecording(job, accepted, actions, statusLine, label) {
  const seconds = Math.round(job.recording?.seconds ?? 0);
  const gaps = job.recording?.gaps.length ?? 0;
  statusLine.textContent = gaps
    ? t('playground:job.recordingGaps', { seconds: formatNumber(seconds), count: gaps, gaps: formatNumber(gaps) })
    : t('playground:job.recording', { seconds: formatNumber(seconds) });
  if (actions.querySelector('[data-stop]')) return;
  const stop = el(
    'button',
    { type: 'button', class: 'small', 'data-stop': '', 'aria-label': t('playground:job.stopLabel', { name: label }) },
    t('playground:job.stop'),
  );
  stop.addEventListener('click', async () => {
    stop.disabled = true;
    try {
      await api(`${accepted.status_url}/stop`, { method: 'POST', headers: controlHeaders(accepted.control_token) });
      stop.textContent = t('playground:job.stopping');
    } catch (err) {
      statusLine.textContent = err.message;
      statusLine.dataset.kind = 'error';
      stop.disabled = false;
    }
  });
  actions.prepend(stop);
}

function showArtifact(actions, artifact) {
  const expires = new Date(artifact.expires_at);
  actions.replaceChildren(
    el(
      'a',
      { class: 'button primary', href: artifact.url, download: artifact.filename },
      t('playground:job.save', { file: artifact.filename }),
    ),
    el(
      'span',
      { class: 'muted' },
      ` ${formatBytes(artifact.size)}`,
      ...(Number.isNaN(expires.getTime())
        ? []
        : [' · ', t('playground:job.until', { time: formatDate(expires, { timeStyle: 'medium' }) })]),
    ),
  );
}

// Another language: the static words are translated already; the shown result is drawn again (the
// clip fields start empty), while the job list keeps its lines until each job's next change.
window.addEventListener(LANGUAGE_EVENT, () => {
  if (result.hidden || !shown) return;
  if (!collection) return renderResult(shown);
  // A collection keeps the pages it has listed: only its words change.
  result.firstElementChild?.replaceWith(resultHead(shown));
  collection.reword();
});
