// @ts-check
// The playground (/): extract a URL, list its media and sources, download a source (progressive files
// are saved straight from the response; HLS/DASH become jobs), merge a video-only with an audio-only
// source, and follow each job until its artifact can be saved.
import { ApiError, api, el, errorOf, formatBytes, say, send } from './api.js';

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
const POLL_MS = 1000;

const profileLabel = (source) => PROFILE_LABELS[source.stream_profile] ?? source.stream_profile;
// A merge pair is one video and one audio source of the same item (DESIGN.md, invalid_merge_pair).
const isVideoOnly = (s) => s.stream_profile === 'video_only' || (SEGMENTED.has(s.stream_profile) && s.has_video === true && s.has_audio === false);
const isAudioOnly = (s) => s.stream_profile === 'audio_only' || (SEGMENTED.has(s.stream_profile) && s.has_video === false);

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

function renderResult(data) {
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

  const rows = item.sources.map((source) => renderSource(source, name, jobName));
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
  return el(
    'article',
    { class: 'card media-item', 'aria-labelledby': titleId },
    el('div', { class: 'media-head' }, thumb, el('div', {}, el('h3', { id: titleId }, name), el('p', { class: 'muted' }, details))),
    el('div', { class: 'table-wrap' }, table),
    videos.length && audios.length ? renderMerge(item, jobName, videos, audios) : null,
  );
}

function placeholder(type) {
  return el('div', { class: 'thumb thumb-empty', 'aria-hidden': 'true' }, type === 'audio' ? '♪' : type === 'image' ? '▣' : '▶');
}

function renderSource(source, itemName, jobName) {
  const dims = source.width && source.height ? `${source.width}×${source.height}` : null;
  const label = `${source.quality} ${profileLabel(source).toLowerCase()}`;
  const progress = el('progress', { class: 'row-progress', max: 100, hidden: true, 'aria-label': `Download progress of ${label}` });
  const button = el('button', { type: 'button', class: 'small', 'aria-label': `Download ${label} of ${itemName}` }, 'Download');
  button.addEventListener('click', () => downloadSource(source, label, jobName, button, progress));
  return el(
    'tr',
    {},
    el('th', { scope: 'row' }, source.quality, dims ? el('span', { class: 'muted block' }, dims) : null),
    el('td', { 'data-label': 'Profile' }, profileLabel(source), source.ext ? el('span', { class: 'muted' }, ` · ${source.ext}`) : null, SEGMENTED.has(source.stream_profile) ? el('span', { class: 'muted block' }, 'saved as a file by a job') : null),
    el('td', { 'data-label': 'Size' }, formatBytes(source.size)),
    el('td', { 'data-label': 'Codecs' }, source.codecs ? el('code', {}, source.codecs) : '—'),
    el('td', { class: 'actions' }, button, progress),
  );
}

function renderMerge(item, name, videos, audios) {
  const id = (part) => `merge-${item.index}-${part}`;
  const option = (s) => el('option', { value: s.url }, [s.quality, profileLabel(s), s.size ? formatBytes(s.size) : null].filter(Boolean).join(' · '));
  const video = el('select', { id: id('video'), name: 'video_url' }, ...videos.map(option));
  const audio = el('select', { id: id('audio'), name: 'audio_url' }, ...audios.map(option));
  const format = el('select', { id: id('format'), name: 'format' }, el('option', { value: '' }, 'Automatic'), ...MERGE_FORMATS.map((f) => el('option', { value: f }, f)));
  const button = el('button', { type: 'submit', class: 'primary' }, 'Merge');
  const field = (labelText, control) => el('div', { class: 'field' }, el('label', { for: control.id }, labelText), control);
  const mergeForm = el(
    'form',
    { class: 'merge' },
    el(
      'fieldset',
      {},
      el('legend', {}, 'Merge video and audio'),
      el('p', { class: 'hint' }, 'Combine a video-only and an audio-only source of this item into one file.'),
      el('div', { class: 'merge-fields' }, field('Video', video), field('Audio', audio), field('Format', format), button),
    ),
  );
  mergeForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { video_url: video.value, audio_url: audio.value };
    if (format.value) body.format = format.value;
    button.disabled = true;
    try {
      const res = await send('/api/v1/download', { method: 'POST', body });
      if (res.status !== 202) throw await errorOf(res);
      trackJob((await res.json()).data, `Merge of ${name}`);
    } catch (err) {
      say(status, err.message, 'error');
    } finally {
      button.disabled = false;
    }
  });
  return mergeForm;
}

/** The name a Content-Disposition header gives, RFC 6266 `filename*` first. */
function filenameFrom(header) {
  if (!header) return null;
  const extended = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(header);
  let name = null;
  if (extended) {
    try {
      name = decodeURIComponent(extended[1].trim());
    } catch {
      name = null;
    }
  }
  if (!name) {
    const plain = /filename\s*=\s*(?:"((?:\\.|[^"\\])*)"|([^;]+))/i.exec(header);
    name = plain ? (plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2].trim()) : null;
  }
  return name ? name.replace(/[\\/\u0000-\u001f]/g, '_') : null;
}

async function downloadSource(source, label, jobName, button, progress) {
  button.disabled = true;
  say(status, `Starting the download of ${label}…`);
  try {
    const res = await send('/api/v1/download', { method: 'POST', body: { url: source.url } });
    if (res.status === 202) {
      trackJob((await res.json()).data, `${source.quality} ${profileLabel(source).toLowerCase()} of ${jobName}`);
      return;
    }
    if (!res.ok) throw await errorOf(res);
    const filename = filenameFrom(res.headers.get('Content-Disposition')) ?? `download${source.ext ? `.${source.ext}` : ''}`;
    progress.hidden = false;
    const blob = await readBody(res, (fraction) => {
      if (fraction === null) progress.removeAttribute('value');
      else progress.value = Math.round(fraction * 100);
    });
    saveBlob(blob, filename);
    say(status, `Saved ${filename} (${formatBytes(blob.size)}).`, 'success');
  } catch (err) {
    say(status, err.message, 'error');
  } finally {
    button.disabled = false;
    progress.hidden = true;
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
    const value = Math.round(job.status === 'completed' ? 100 : job.progress ?? 0);
    progress.value = value;
    percent.textContent = `${value}%`;
    badge.textContent = job.status;
    badge.dataset.status = job.status;
    if (job.status !== lastStatus) {
      lastStatus = job.status;
      statusLine.dataset.kind = job.status === 'failed' ? 'error' : job.status === 'completed' ? 'success' : 'info';
      statusLine.textContent = job.status === 'failed' && job.error ? `Failed: ${job.error.message}` : STATUS_TEXT[job.status] ?? job.status;
      if (job.status === 'completed' && job.artifact) showArtifact(actions, job.artifact);
    }
    if (job.status === 'queued' || job.status === 'processing') setTimeout(poll, POLL_MS);
  };
  poll();
}

function showArtifact(actions, artifact) {
  const expires = new Date(artifact.expires_at);
  actions.replaceChildren(
    el('a', { class: 'button primary', href: artifact.url, download: artifact.filename }, `Save ${artifact.filename}`),
    el('span', { class: 'muted' }, ` ${formatBytes(artifact.size)}`, Number.isNaN(expires.getTime()) ? null : ` · available until ${expires.toLocaleTimeString()}`),
  );
}
