// @ts-check
// The front page (/): a link in, the file out, in one action. The page is extracted first (so a
// collection can show its entries and a live stream can offer to record); anything else is one
// POST /api/v1/download with page_url and the visitor's remembered preferences. A direct stream is
// then saved by the browser itself, following GET /api/v1/download/stream (the bytes go to disk, not
// into this page); a job joins the queue (front-queue.js), which follows its event stream.
import { api, errorOf, say, send } from './api.js';
import { filenameFrom } from './disposition.js';
import { showCollection, showLive } from './front-choice.js';
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

const queue = new Queue({ section: byId('queue'), list: byId('queue-list'), clear: byId('clear-finished'), announce: (message, kind) => say(status, message, kind) });

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
  const parts = [prefs.audio_only ? t('front:audioOnly') : quality.selectedOptions[0]?.textContent ?? prefs.quality];
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
    say(status, err.code === 'network_error' ? t('front:offline') : err.message, 'error');
  } finally {
    button.disabled = false;
  }
}

async function start(link) {
  choice.hidden = true;
  say(status, t('front:looking'));
  const info = await api('/api/v1/extract', { method: 'POST', body: { url: link } });
  const title = info.title || link;
  if (info.content_type === 'collection') {
    say(status, t('front:collectionFound', { title }));
    showCollection(choice, info, (entries, button) => busy(button, () => downloadCollection(link, title, entries)));
    return;
  }
  const item = info.media?.[0];
  const live = item?.sources.find((s) => s.is_live === true);
  if (live) {
    say(status, t('front:liveFound', { title }));
    showLive(choice, info, (button) => busy(button, () => record(link, title)));
    return;
  }
  // A gallery: the first item in one action; the rest are a click away under More options.
  const others = (info.media?.length ?? 1) - 1;
  await downloadPage(link, title, others > 0 ? t('front:otherItems', { count: others }) : '');
}

/**
 * One-step download of the page; a stream goes to the browser's downloads, a job to the queue.
 * `note` is said after the outcome (that the page has more items).
 */
async function downloadPage(link, title, note) {
  const fields = preset();
  say(status, t('front:starting', { title }));
  // Only the first byte is asked for: if the answer is a stream, its bytes come again by the link
  // below (a stream read here would sit whole in this page's memory).
  const res = await fetch('/api/v1/download', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', Range: 'bytes=0-0' },
    body: JSON.stringify({ page_url: link, ...fields }),
    credentials: 'same-origin',
  }).catch(() => {
    throw new Error(t('front:offline'));
  });
  if (res.status === 202) {
    const accepted = (await res.json()).data;
    queue.add({ id: accepted.job_id, title, kind: 'job', status: accepted.status });
    say(status, [t('front:jobStarted', { title }), note].filter(Boolean).join(' '));
    return;
  }
  if (!res.ok) throw await errorOf(res);
  const filename = filenameFrom(res.headers.get('Content-Disposition')) ?? undefined;
  await res.body?.cancel().catch(() => undefined);
  const query = new URLSearchParams({ page_url: link });
  for (const [name, value] of Object.entries(fields)) query.set(name, String(value));
  saveLink(`/api/v1/download/stream?${query}`, filename);
  queue.add({ id: `direct-${Date.now().toString(36)}`, title, kind: 'direct', status: 'saved', filename });
  say(status, [t('front:savingStarted', { filename: filename ?? title }), note].filter(Boolean).join(' '), 'success');
}

async function downloadCollection(link, title, entries) {
  const accepted = await startJob({ collection_url: link, entries, ...preset() });
  queue.add({ id: accepted.job_id, title, kind: 'collection', status: accepted.status });
  choice.hidden = true;
  say(status, t('front:collectionStarted', { title }));
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
  queue.add({ id: accepted.job_id, title, kind: 'record', status: accepted.status });
  choice.hidden = true;
  say(status, t('front:recordingStarted', { title }));
}

/** A download that must be a job: its 202 body's data, or the server's refusal as an error. */
async function startJob(body) {
  const res = await send('/api/v1/download', { method: 'POST', body });
  if (res.status !== 202) throw res.ok ? new Error(t('front:unexpected')) : await errorOf(res);
  return (await res.json()).data;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const link = input.value.trim();
  if (!validUrl(link)) {
    input.setAttribute('aria-invalid', 'true');
    say(status, t('front:badLink'), 'error');
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
// The header's language switch: the rows and the preferences' summary were built in the old language.
window.addEventListener(LANGUAGE_EVENT, () => {
  showPrefs();
  queue.render();
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
