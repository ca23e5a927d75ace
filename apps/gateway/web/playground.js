// @ts-check
// The playground (/): extract a URL, list its media and sources, download a source (progressive files
// are saved straight from the response; HLS/DASH become jobs), merge a video-only with an audio-only
// source, convert a source to another format or to audio only, cut a clip of an item (clip.js), save
// or embed subtitles (subtitles.js), and follow each job until its artifact can be saved.
import { ApiError, api, el, errorOf, formatBytes, say, send } from './api.js';
import { clipBox } from './clip.js';
import { filenameFrom } from './disposition.js';
import { languageChoices, renderSubtitles } from './subtitles.js';

const form = /** @type {HTMLFormElement} */ (document.getElementById('extract-form'));
const urlInput = /** @type {HTMLInputElement} */ (document.getElementById('url'));
const extractButton = /** @type {HTMLButtonElement} */ (document.getElementById('extract-button'));
const status = /** @type {HTMLElement} */ (document.getElementById('status'));
const result = /** @type {HTMLElement} */ (document.getElementById('result'));
const jobsSection = /** @type {HTMLElement} */ (document.getElementById('jobs'));
const jobList = /** @type {HTMLElement} */ (document.getElementById('job-list'));

const PROFILE_LABELS = {
  muxed_progressive: 'Video + audio',
  video_only: 'Video only',
  audio_only: 'Audio only',
  image: 'Image',
  hls: 'HLS stream',
  dash: 'DASH stream',
};
const SEGMENTED = new Set(['hls', 'dash']);
const MERGE_FORMATS = ['mp4', 'webm', 'mkv'];
const AUDIO_FORMATS = ['mp3', 'm4a', 'opus', 'wav'];
const POLL_MS = 1000;

const profileLabel = (source) => PROFILE_LABELS[source.stream_profile] ?? source.stream_profile;
// A merge pair is one video and one audio source of the same item (DESIGN.md, invalid_merge_pair).
const isVideoOnly = (s) => s.stream_profile === 'video_only' || (SEGMENTED.has(s.stream_profile) && s.has_video === true && s.has_audio === false);
const isAudioOnly = (s) => s.stream_profile === 'audio_only' || (SEGMENTED.has(s.stream_profile) && s.has_video === false);
// A stream that does not say (a media playlist without CODECS) may have sound: offer audio formats.
const hasAudio = (s) => isAudioOnly(s) || s.stream_profile === 'muxed_progressive' || (SEGMENTED.has(s.stream_profile) && s.has_audio !== false);

/** Extracts through the keyless surface A route. */
function extract(url) {
  return api('/api/playground', { method: 'POST', body: { url } });
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
  const url = urlInput.value.trim();
  if (!validUrl(url)) {
    urlInput.setAttribute('aria-invalid', 'true');
    say(status, 'Enter a full http:// or https:// address.', 'error');
    urlInput.focus();
    return;
  }
  urlInput.removeAttribute('aria-invalid');
  extractButton.disabled = true;
  extractButton.textContent = 'Extracting…';
  result.setAttribute('aria-busy', 'true');
  say(status, 'Looking for media…');
  try {
    const data = await extract(url);
    renderResult(data);
    const count = data.media.length;
    say(status, `Found ${count} media item${count === 1 ? '' : 's'} in “${data.title}”.`, 'success');
  } catch (err) {
    result.hidden = true;
    say(status, err.message, 'error');
  } finally {
    extractButton.disabled = false;
    extractButton.textContent = 'Extract';
    result.removeAttribute('aria-busy');
  }
});

function fact(term, value) {
  return el('div', {}, el('dt', {}, term), el('dd', {}, value));
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

function renderResult(data) {
  extractionId = data.extraction_id;
  const head = el(
    'header',
    { class: 'card result-head' },
    el('h2', { id: 'result-title' }, data.title),
    el(
      'dl',
      { class: 'facts' },
      fact('Platform', data.platform),
      fact('Extract profile', data.extract_profile),
      fact('Content', data.content_type),
      fact('Items', String(data.media.length)),
    ),
    el('p', { class: 'source-link' }, el('a', { href: data.url, rel: 'noopener noreferrer', target: '_blank' }, data.url)),
  );
  result.replaceChildren(head, ...data.media.map((item) => renderItem(item, data)));
  result.hidden = false;
}

function renderItem(item, data) {
  const n = item.index + 1;
  const titleId = `item-${item.index}-title`;
  const count = data.media.length;
  const name = item.title || (count > 1 ? `Item ${n}` : 'Media');
  // Job labels outlive the result on screen, so they carry the page title.
  const jobName = count > 1 ? `${data.title} (${name})` : data.title;
  const details = [item.type, formatDuration(item.duration), `${item.sources.length} source${item.sources.length === 1 ? '' : 's'}`].filter(Boolean).join(' · ');
  const thumb = item.thumbnail
    ? el('img', { class: 'thumb', src: item.thumbnail, alt: `Thumbnail of ${name}`, loading: 'lazy', referrerpolicy: 'no-referrer', onerror: (e) => e.target.replaceWith(placeholder(item.type)) })
    : placeholder(item.type);

  // Images cannot be cut; anything else shares the item's clip range.
  const clip = item.sources.some((s) => s.stream_profile !== 'image') ? clipBox(item) : null;
  const rows = item.sources.map((source) => renderSource(source, name, jobName, clip));
  const table = el(
    'table',
    { class: 'sources' },
    el('caption', { class: 'visually-hidden' }, `Sources of ${name}, best first`),
    el(
      'thead',
      {},
      el('tr', {}, ...['Quality', 'Profile', 'Size', 'Codecs'].map((h) => el('th', { scope: 'col' }, h)), el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Actions'))),
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
    el('div', { class: 'media-head' }, thumb, el('div', {}, el('h3', { id: titleId }, name), el('p', { class: 'muted' }, details))),
    clip ? el('div', { class: 'item-choices' }, clip.node, renderAudio(item, name, jobName, clip)) : null,
    el('div', { class: 'table-wrap' }, table),
    videos.length && audios.length ? renderMerge(item, jobName, videos, audios, clip) : null,
    subtitles,
  );
}

function placeholder(type) {
  return el('div', { class: 'thumb thumb-empty', 'aria-hidden': 'true' }, type === 'audio' ? '♪' : type === 'image' ? '▣' : '▶');
}

/** The clip to send: undefined for none, false when the range is wrong (the clip box says why). */
function clipOf(clip) {
  const range = clip?.read();
  return range === false ? false : range ?? undefined;
}

/**
 * Audio only for the item, where the API can write it: its best audio-only source, else its best
 * source with sound converted to an audio format. Null when no source has sound.
 */
function renderAudio(item, itemName, jobName, clip) {
  const source = item.sources.find(isAudioOnly) ?? item.sources.find(hasAudio);
  if (!source) return null;
  const id = (part) => `audio-${item.index}-${part}`;
  const from = `${source.quality} ${profileLabel(source).toLowerCase()}`;
  const format = el('select', { id: id('format'), 'aria-describedby': id('hint') }, ...AUDIO_FORMATS.map((f) => el('option', { value: f }, f)));
  const button = el('button', { type: 'button', 'aria-describedby': id('hint') }, 'Save audio');
  button.addEventListener('click', () => {
    const range = clipOf(clip);
    if (range === false) return;
    const body = { url: source.url, format: format.value, clip: range };
    const job = `Audio of ${jobName} as ${body.format}${range ? ` (${clip.label(range)})` : ''}`;
    download(body, { label: `the audio of ${itemName}`, job, fallback: `audio.${body.format}` }, button, null, clip);
  });
  return el(
    'fieldset',
    { class: 'audio-only' },
    el('legend', {}, 'Audio only'),
    el('p', { id: id('hint'), class: 'hint' }, `The sound of the ${from} source${isAudioOnly(source) ? '' : ', without its picture'}.`),
    el('label', { for: id('format') }, 'Format'),
    el('div', { class: 'input-row' }, format, button),
  );
}

function renderSource(source, itemName, jobName, clip) {
  const dims = source.width && source.height ? `${source.width}×${source.height}` : null;
  const label = `${source.quality} ${profileLabel(source).toLowerCase()}`;
  const progress = el('progress', { class: 'row-progress', max: 100, hidden: true, 'aria-label': `Download progress of ${label}` });
  // A live source is recorded (operation record) until it ends or the job's Stop button is pressed.
  const live = source.is_live === true;
  const button = el('button', { type: 'button', class: 'small', 'aria-label': `${live ? 'Record' : 'Download'} ${label} of ${itemName}` }, live ? 'Record' : 'Download');
  // Any source may be converted (a job): audio formats from anything with sound, video formats from video.
  const video = source.stream_profile !== 'image' && !isAudioOnly(source);
  const audio = hasAudio(source);
  const option = (f, note) => el('option', { value: f }, note ? `${f} (${note})` : f);
  const format = !live && (video || audio)
    ? el(
        'select',
        { class: 'small', 'aria-label': `Format of ${label} of ${itemName}` },
        el('option', { value: '' }, SEGMENTED.has(source.stream_profile) ? 'Automatic' : 'Original'),
        video ? el('optgroup', { label: 'Video' }, ...MERGE_FORMATS.map((f) => option(f))) : null,
        audio ? el('optgroup', { label: 'Audio only' }, ...AUDIO_FORMATS.map((f) => option(f, video ? 'audio only' : null))) : null,
      )
    : null;
  button.addEventListener('click', () => {
    if (live) {
      download({ url: source.url, live: {} }, { label, job: `recording of ${jobName}`, fallback: 'recording.mp4' }, button, progress, clip);
      return;
    }
    const range = source.stream_profile === 'image' ? undefined : clipOf(clip);
    if (range === false) return;
    const body = { url: source.url, clip: range };
    if (format?.value) body.format = format.value;
    const names = { label, job: `${source.quality} ${profileLabel(source).toLowerCase()} of ${jobName}${body.format ? ` as ${body.format}` : ''}${range ? ` (${clip.label(range)})` : ''}`, fallback: `download${source.ext ? `.${source.ext}` : ''}` };
    download(body, names, button, progress, clip);
  });
  return el(
    'tr',
    {},
    el('th', { scope: 'row' }, source.quality, dims ? el('span', { class: 'muted block' }, dims) : null),
    el('td', { 'data-label': 'Profile' }, profileLabel(source), source.ext ? el('span', { class: 'muted' }, ` · ${source.ext}`) : null, SEGMENTED.has(source.stream_profile) ? el('span', { class: 'muted block' }, 'saved as a file by a job') : null),
    el('td', { 'data-label': 'Size' }, formatBytes(source.size)),
    el('td', { 'data-label': 'Codecs' }, source.codecs ? el('code', {}, source.codecs) : '—'),
    el('td', { class: 'actions' }, format, button, progress),
  );
}

function renderMerge(item, name, videos, audios, clip) {
  const id = (part) => `merge-${item.index}-${part}`;
  const option = (s) => el('option', { value: s.url }, [s.quality, profileLabel(s), s.size ? formatBytes(s.size) : null].filter(Boolean).join(' · '));
  const video = el('select', { id: id('video'), name: 'video_url' }, ...videos.map(option));
  const audio = el('select', { id: id('audio'), name: 'audio_url' }, ...audios.map(option));
  const format = el('select', { id: id('format'), name: 'format' }, el('option', { value: '' }, 'Automatic'), ...MERGE_FORMATS.map((f) => el('option', { value: f }, f)));
  const button = el('button', { type: 'submit', class: 'primary' }, 'Merge');
  const field = (labelText, control) => el('div', { class: 'field' }, el('label', { for: control.id }, labelText), control);
  const subtitles = languageChoices(item, 'Subtitles to embed in the merge');
  const mergeForm = el(
    'form',
    { class: 'merge' },
    el(
      'fieldset',
      {},
      el('legend', {}, 'Merge video and audio'),
      el('p', { class: 'hint' }, 'Combine a video-only and an audio-only source of this item into one file.'),
      subtitles?.node ?? null,
      el('div', { class: 'merge-fields' }, field('Video', video), field('Audio', audio), field('Format', format), button),
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
      clip.show('A clip cannot embed subtitles: clear the clip or uncheck the languages.');
      return;
    }
    button.disabled = true;
    try {
      const res = await send('/api/v1/download', { method: 'POST', body: { ...body, extraction_id: extractionId } });
      if (res.status !== 202) throw await errorOf(res);
      trackJob((await res.json()).data, `Merge of ${name}${range ? ` (${clip.label(range)})` : ''}`);
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
  say(status, `Starting the download of ${names.label}…`);
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
    say(status, `Saved ${filename} (${formatBytes(blob.size)}).`, 'success');
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
  queued: 'Queued, waiting for a worker.',
  processing: 'Processing.',
  completed: 'Completed.',
  failed: 'Failed.',
  expired: 'Expired: the file was removed. Start the download again.',
  cancelled: 'Cancelled.',
};

/** Adds a job to the list and polls it until it ends. `accepted` is the 202 body's data. */
function trackJob(accepted, label) {
  jobsSection.hidden = false;
  const existing = jobList.querySelector(`[data-job-id="${CSS.escape(accepted.job_id)}"]`);
  if (existing) {
    say(status, `${label}: this job is already in the list.`);
    existing.scrollIntoView({ block: 'nearest' });
    return;
  }
  const id = `job-${jobList.children.length + 1}`;
  const badge = el('span', { class: 'badge', 'data-status': accepted.status }, accepted.status);
  const progress = el('progress', { max: 100, value: 0, 'aria-labelledby': `${id}-label`, 'aria-describedby': `${id}-status` });
  const percent = el('span', { class: 'percent', 'aria-hidden': 'true' }, '0%');
  const statusLine = el('p', { id: `${id}-status`, class: 'job-status', 'aria-live': 'polite' }, STATUS_TEXT[accepted.status] ?? accepted.status);
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
  say(status, `${label}: job started.`);

  // Cancel (DELETE /api/v1/jobs/{id}) while the job is queued or processing; the poll shows the end.
  const cancel = el('button', { type: 'button', class: 'small', 'aria-label': `Cancel ${label}` }, 'Cancel');
  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await api(accepted.status_url, { method: 'DELETE' });
      statusLine.textContent = STATUS_TEXT.cancelled;
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
      statusLine.textContent = failures < 5 ? `${err.message} Retrying…` : err.message;
      statusLine.dataset.kind = 'error';
      if (failures < 5) setTimeout(poll, POLL_MS * 2 ** failures);
      return;
    }
    if (job.operation === 'record' && job.status === 'processing') showRecording(job, accepted, actions, statusLine, label);
    const value = Math.round(job.status === 'completed' ? 100 : job.progress ?? 0);
    progress.value = value;
    percent.textContent = `${value}%`;
    badge.textContent = job.status;
    badge.dataset.status = job.status;
    if (job.status !== lastStatus) {
      lastStatus = job.status;
      statusLine.dataset.kind = job.status === 'failed' ? 'error' : job.status === 'completed' ? 'success' : 'info';
      statusLine.textContent = job.status === 'failed' && job.error ? `Failed: ${job.error.message}` : STATUS_TEXT[job.status] ?? job.status;
      if (job.status === 'completed' && job.recording) statusLine.textContent = `Recorded ${Math.round(job.recording.seconds)} s (${job.ended}).`;
      if (job.status === 'completed' && job.artifact) showArtifact(actions, job.artifact);
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
  statusLine.textContent = `Recording: ${seconds} s${gaps ? `, ${gaps} gap${gaps === 1 ? '' : 's'}` : ''}.`;
  if (actions.querySelector('[data-stop]')) return;
  const stop = el('button', { type: 'button', class: 'small', 'data-stop': '', 'aria-label': `Stop ${label} and keep what was recorded` }, 'Stop');
  stop.addEventListener('click', async () => {
    stop.disabled = true;
    try {
      await api(`${accepted.status_url}/stop`, { method: 'POST' });
      stop.textContent = 'Stopping…';
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
    el('a', { class: 'button primary', href: artifact.url, download: artifact.filename }, `Save ${artifact.filename}`),
    el('span', { class: 'muted' }, ` ${formatBytes(artifact.size)}`, Number.isNaN(expires.getTime()) ? null : ` · available until ${expires.toLocaleTimeString()}`),
  );
}
