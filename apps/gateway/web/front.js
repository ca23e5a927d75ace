// @ts-check
// The front page (/): a link in, the file out, in one action. The page is extracted first (so a
// collection can show its entries and a live stream can offer to record); anything else is one
// POST /api/v1/download with page_url and the visitor's remembered preferences. A page with several
// items shows them to pick (front-choice.js), each picked one then downloaded the same way with its
// `item`. A direct stream is saved by the browser itself, following GET /api/v1/download/stream (the
// bytes go to disk, not into this page); a job joins the queue (front-queue.js), which follows its
// event stream. What the page says is kept as words, not text, so a language switch says it again.
import { api, errorOf, keptReason, keyedError, say, send, wordsOf } from './api.js';
import { filenameFrom } from './disposition.js';
import { showCollection, showItems, showLive } from './front-choice.js';
import { Queue, saveLink } from './front-queue.js';
import { LANGUAGE_EVENT, ready, t } from './i18n.js';
import { linkIn } from './share.js';

const PREFS_KEY = 'reelay-preferences';
const QUALITIES = ['best', '2160p', '1440p', '1080p', '720p', '480p', '360p', 'worst'];
const FORMATS = ['', 'mp4', 'webm', 'mkv', 'mp3', 'm4a', 'opus', 'wav'];
const AUDIO_FORMATS = new Set(['mp3', 'm4a', 'opus', 'wav']);

const byId = (id) => /** @type {any} */ (document.getElementById(id));
const form = /** @type {HTMLFormElement} */ (byId('front-form'));
const input = /** @type {HTMLInputElement} */ (byId('link'));
const go = /** @type {HTMLButtonElement} */ (byId('go'));
const status = /** @type {HTMLElement} */ (byId('status'));
const choice = /** @type {HTMLElement} */ (byId('choice'));
const quality = /** @type {HTMLSelectElement} */ (byId('pref-quality'));
const format = /** @type {HTMLSelectElement} */ (byId('pref-format'));
const audioOnly = /** @type {HTMLInputElement} */ (byId('pref-audio'));
const prefsSummary = /** @type {HTMLElement} */ (byId('prefs-summary'));
const moreLink = /** @type {HTMLAnchorElement} */ (byId('more-link'));

/** @type {{ words: () => string, kind: import('./api.js').SayKind } | null} what the status line says */
let statusLine = null;
/** @type {{ reword: () => void } | null} the choice on show (a collection, a page's items, a live stream) */
let panel = null;

/** Says `words()` in the status line, and again in the new language after a switch. */
function tell(/** @type {() => string} */ words, /** @type {import('./api.js').SayKind} */ kind = 'info') {
  statusLine = { words, kind };
  say(status, words(), kind);
}

function closeChoice() {
  choice.hidden = true;
  panel = null;
}

const queue = new Queue({
  section: byId('queue'),
  list: byId('queue-list'),
  clear: byId('clear-finished'),
  announce: tell,
});
/** Ids for direct downloads, unique even when a gallery's items start within one millisecond. */
let directCount = 0;

/** @returns {{ quality: string, format: string, audio_only: boolean }} */
function loadPrefs() {
  let stored = {};
  try {
    stored = JSON.parse(window.localStorage.getItem(PREFS_KEY) ?? '{}') ?? {};
  } catch {
    // Unreadable or refused: the defaults.
  }
  return {
    quality: QUALITIES.includes(stored.quality) ? stored.quality : 'best',
    format: FORMATS.includes(stored.format) ? stored.format : '',
    audio_only: stored.audio_only === true,
  };
}

function savePrefs() {
  try {
    window.localStorage.setItem(PREFS_KEY, JSON.stringify(currentPrefs()));
  } catch {
    // Not remembered; this visit still uses them.
  }
  showPrefs();
}

function currentPrefs() {
  return { quality: quality.value, format: format.value, audio_only: audioOnly.checked };
}

/** The preferences as download fields: defaults left out, a video format dropped for sound only. */
function preset() {
  const prefs = currentPrefs();
  /** @type {Record<string, unknown>} */
  const fields = {};
  if (prefs.audio_only) fields.audio_only = true;
  else if (prefs.quality !== 'best') fields.quality = prefs.quality;
  if (prefs.format && (!prefs.audio_only || AUDIO_FORMATS.has(prefs.format))) fields.format = prefs.format;
  return fields;
}

/** "720p · MP3" beside the Preferences heading, so the choice shows while it is folded. */
function showPrefs() {
  const prefs = currentPrefs();
  const parts = [prefs.audio_only ? t('front:audioOnly') : (quality.selectedOptions[0]?.textContent ?? prefs.quality)];
  if (prefs.format) parts.push(format.selectedOptions[0]?.textContent ?? prefs.format);
  prefsSummary.textContent = `(${parts.join(' · ')})`;
  quality.disabled = prefs.audio_only;
}

function validUrl(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** The link the More options page should open with. */
function updateMoreLink() {
  const link = input.value.trim();
  moreLink.href = validUrl(link) ? `/advanced?u=${encodeURIComponent(link)}` : '/advanced';
}

/** Runs `work` with `button` busy; its errors are said in the status line. */
async function busy(button, work) {
  button.disabled = true;
  try {
    await ready;
    await work();
  } catch (err) {
    tell(failureWords(err), 'error');
  } finally {
    button.disabled = false;
  }
}

/**
 * A failure in words for people. "No media" gets plain words and a next step: the server's own list
 * of where it looked (OpenGraph, JSON-LD, yt-dlp…) is for developers, while a more precise reason
 * (a post that links elsewhere, a manifest with no streams) is kept after the plain words.
 * @param {any} err @returns {() => string}
 */
function failureWords(err) {
  if (err.code === 'network_error') return () => t('front:offline');
  if (err.code !== 'no_media_found') return wordsOf(err);
  const reason = keptReason(err);
  return / looked for /.test(reason) ? () => t('front:noMedia') : () => t('front:noMediaBecause', { reason });
}

async function start(link) {
  closeChoice();
  tell(() => t('front:looking'));
  const info = await api('/api/v1/extract', { method: 'POST', body: { url: link } });
  const title = info.title || link;
  const host = { run: busy, announce: tell };
  if (info.content_type === 'collection') {
    tell(() => t('front:collectionFound', { title }));
    panel = showCollection(choice, info, {
      ...host,
      more: (cursor) => nextPage(link, cursor),
      download: (entries) => downloadCollection(link, title, entries),
    });
    return;
  }
  const item = info.media?.[0];
  const live = item?.sources.find((s) => s.is_live === true);
  if (live) {
    tell(() => t('front:liveFound', { title }));
    panel = showLive(choice, info, { ...host, record: () => record(link, title) });
    return;
  }
  // Several items (a gallery, a post with several videos): which of them is the person's to say.
  const count = info.media?.length ?? 0;
  if (count > 1) {
    tell(() => t('front:itemsFound', { title, count }));
    panel = showItems(choice, info, { ...host, download: (items) => downloadItems(link, title, items, count) });
    return;
  }
  tell(() => t('front:starting', { title }));
  const outcome = await downloadPage(link, title);
  // Made before: the queue reads its file and says so. A direct download's row says where it went,
  // so the status line only tells screen readers.
  if (outcome.made) return;
  if (outcome.job) tell(() => t('front:jobStarted', { title }));
  else tell(() => t('front:savingStarted', { filename: outcome.filename }), 'quiet');
}

/** The next page of a collection, by the cursor its last page gave. */
async function nextPage(link, cursor) {
  const page = await api('/api/v1/extract', { method: 'POST', body: { url: link, cursor } });
  if (page?.content_type !== 'collection') throw keyedError(0, 'unexpected', 'front:unexpected');
  return page;
}

/**
 * One-step download of the page (of its media item `item`, when given): a stream goes to the
 * browser's downloads, a job to the queue. Answers which it was.
 * @param {string} link @param {string} title @param {number} [item]
 * @returns {Promise<{ job: boolean, made?: boolean, filename: string }>}
 */
async function downloadPage(link, title, item) {
  const fields = { ...(item === undefined ? {} : { item }), ...preset() };
  // Only the first byte is asked for: if the answer is a stream, its bytes come again by the link
  // below (a stream read here would sit whole in this page's memory).
  const res = await fetch('/api/v1/download', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', Range: 'bytes=0-0' },
    body: JSON.stringify({ page_url: link, ...fields }),
    credentials: 'same-origin',
  }).catch(() => {
    throw keyedError(0, 'network_error', 'front:offline');
  });
  if (res.status === 202) {
    const accepted = (await res.json()).data;
    queue.add({ id: accepted.job_id, title, kind: 'job', status: accepted.status, token: accepted.control_token });
    return { job: true, made: accepted.status === 'completed', filename: title };
  }
  if (!res.ok) throw await errorOf(res);
  const filename = filenameFrom(res.headers.get('Content-Disposition')) ?? undefined;
  await res.body?.cancel().catch(() => undefined);
  const query = new URLSearchParams({ page_url: link });
  for (const [name, value] of Object.entries(fields)) query.set(name, String(value));
  saveLink(`/api/v1/download/stream?${query}`, filename);
  queue.add({
    id: `direct-${Date.now().toString(36)}-${(directCount += 1)}`,
    title,
    kind: 'direct',
    status: 'saved',
    filename,
  });
  return { job: false, filename: filename ?? title };
}

/**
 * The picked items of a page, one after another, each as its own one-step download. An item that
 * cannot start is a failed row in the queue with its reason, and the rest still start; only when
 * none starts is the first reason said instead (the same for all, most likely).
 * @param {string} link @param {string} title @param {number[]} items from 0 @param {number} count the page's items
 */
async function downloadItems(link, title, items, count) {
  let started = 0;
  /** @type {unknown} */
  let firstError;
  for (const item of items) {
    const name = `${title} · ${item + 1}/${count}`;
    tell(() => t('front:starting', { title: name }));
    try {
      await downloadPage(link, name, item);
      started += 1;
    } catch (err) {
      firstError ??= err;
      queue.add({
        id: `failed-${Date.now().toString(36)}-${(directCount += 1)}`,
        title: name,
        kind: 'direct',
        status: 'failed',
        error: keptReason(err),
      });
    }
  }
  if (started === 0) throw firstError;
  closeChoice();
  const failed = items.length - started;
  if (failed === 0) tell(() => t('front:itemsStarted', { count: items.length, title }), 'success');
  else tell(() => t('front:itemsSomeFailed', { count: failed, started, total: items.length, title }), 'error');
}

async function downloadCollection(link, title, entries) {
  const accepted = await startJob({ collection_url: link, entries, ...preset() });
  queue.add({ id: accepted.job_id, title, kind: 'collection', status: accepted.status, token: accepted.control_token });
  closeChoice();
  tell(() => t('front:collectionStarted', { title }));
}

/**
 * Records the page's live stream by the one-step download, so the server picks what to record as for
 * any download (a live DASH stream's video and its audio together). Only the quality and audio-only
 * preferences apply: a recording is an mp4 (or mkv) of the stream as it is.
 */
async function record(link, title) {
  const prefs = currentPrefs();
  const choose = prefs.audio_only ? { audio_only: true } : prefs.quality !== 'best' ? { quality: prefs.quality } : {};
  const accepted = await startJob({ page_url: link, live: {}, ...choose });
  queue.add({ id: accepted.job_id, title, kind: 'record', status: accepted.status, token: accepted.control_token });
  closeChoice();
  tell(() => t('front:recordingStarted', { title }));
}

/** A download that must be a job: its 202 body's data, or the server's refusal as an error. */
async function startJob(body) {
  const res = await send('/api/v1/download', { method: 'POST', body });
  if (res.status !== 202) throw res.ok ? keyedError(res.status, 'unexpected', 'front:unexpected') : await errorOf(res);
  return (await res.json()).data;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const link = input.value.trim();
  if (!validUrl(link)) {
    input.setAttribute('aria-invalid', 'true');
    tell(() => t('front:badLink'), 'error');
    input.focus();
    return;
  }
  input.removeAttribute('aria-invalid');
  busy(go, () => start(link));
});

input.addEventListener('input', updateMoreLink);
for (const control of [quality, format, audioOnly]) control.addEventListener('change', savePrefs);

await ready;
const prefs = loadPrefs();
quality.value = prefs.quality;
format.value = prefs.format;
audioOnly.checked = prefs.audio_only;
showPrefs();
queue.start();
// The header's language switch: what this page's scripts wrote is in the old language; say it again.
window.addEventListener(LANGUAGE_EVENT, () => {
  showPrefs();
  queue.render();
  panel?.reword();
  if (statusLine) say(status, statusLine.words(), statusLine.kind);
});
// The page is ready for its one action (the speed benchmark and the tests wait for this mark).
form.dataset.ready = 'true';

// A link handed over by /?u=…, a bookmark or the installed app's share target: download it at once,
// and take it out of the address so a reload does not download it again.
const params = new URLSearchParams(window.location.search);
const shared = params.get('u')?.trim() || linkIn(params.get('text')) || linkIn(params.get('title'));
if (shared) {
  input.value = shared.slice(0, 2048);
  updateMoreLink();
  window.history.replaceState(null, '', '/');
  form.requestSubmit();
}
