// @ts-check
// The front page's queue of downloads: kept in localStorage so it survives a reload, each running job
// followed on its event stream (GET /api/v1/jobs/{id}/events, the Job as JSON on every change) with a
// progress bar and an estimate of the time left. A finished job's file is saved at once when this page
// saw it finish, or when the server answered a download with a job it had finished before (the same
// download, asked for by the CLI or another browser), and offered with a button; a failure shows the
// server's reason. Running jobs can be cancelled, recordings stopped: each job's control token is kept
// with it, so after a reload too. When a job ends, its row says so:
// the page's status line announces it to screen readers without showing the same words a second time.
import { api, controlHeaders, el, formatBytes, keptReason, wordsOf } from './api.js';
import { t } from './i18n.js';

const STORAGE_KEY = 'reelay-queue';
const MAX_ENTRIES = 30;
const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);
/** A followed job with no event for this long is asked after, and its stream opened anew (Queue.heard). */
const SILENCE_MS = 60_000;

/**
 * One line of the queue, as stored.
 * @typedef {{ id: string, title: string, kind: 'job' | 'collection' | 'record' | 'direct', status: string,
 *   progress?: number, filename?: string, size?: number, artifact?: { url: string, filename: string, size: number, expires_at: string },
 *   error?: string, unknown?: boolean, saved?: boolean, stopping?: boolean, counts?: { done: number, total: number, failed: number },
 *   detail?: string, recording?: number, created: number, token?: string }} Entry
 * (`counts`: a collection's entries, worded when shown; `detail` is the same as words stored by
 * earlier versions. `unknown`: the server no longer knows the job. `stopping`: a stop was asked for.
 * `token`: the job's control_token, which its Cancel and Stop send; only this browser has it.)
 */

/** @returns {Entry[]} */
function load() {
  try {
    const parsed = JSON.parse(window.localStorage.getItem(STORAGE_KEY) ?? '[]');
    return Array.isArray(parsed)
      ? parsed.filter((e) => e && typeof e.id === 'string' && typeof e.title === 'string')
      : [];
  } catch {
    return [];
  }
}

/** Seconds as "12 s" or "3 min", in the visitor's language. @param {number} seconds */
export function duration(seconds) {
  const s = Math.max(1, Math.round(seconds));
  return s < 90 ? t('front:seconds', { count: s }) : t('front:minutes', { count: Math.round(s / 60) });
}

/**
 * Time left from how fast progress has moved since the job started processing: null until it has
 * moved (a guess from one sample would swing wildly).
 * @param {{ at: number, progress: number } | undefined} first @param {number} progress @param {number} now
 */
export function timeLeft(first, progress, now) {
  if (!first || progress <= first.progress || progress >= 100) return null;
  const perPercent = (now - first.at) / (progress - first.progress);
  return (perPercent * (100 - progress)) / 1000;
}

export class Queue {
  /** @param {{ section: HTMLElement, list: HTMLElement, clear: HTMLButtonElement, announce: (words: () => string, kind?: import('./api.js').SayKind) => void }} parts */
  constructor(parts) {
    this.parts = parts;
    /** @type {Entry[]} */
    this.entries = load();
    /** @type {Map<string, EventSource>} */
    this.streams = new Map();
    /** @type {Map<string, ReturnType<typeof setTimeout>>} each followed job's silence timer */
    this.silence = new Map();
    /** @type {Map<string, { at: number, progress: number }>} when each job's progress started moving */
    this.firstSample = new Map();
    /** @type {Map<string, HTMLElement>} */
    this.rows = new Map();
    parts.clear.addEventListener('click', () => {
      this.entries = this.entries.filter((e) => !TERMINAL.has(e.status) && e.status !== 'saved');
      this.save();
      this.render();
    });
    // The time left moves on between events (and grows while a job stalls): say it anew every few seconds.
    setInterval(() => {
      for (const entry of this.entries) {
        if (entry.status !== 'processing' || entry.kind === 'record') continue;
        const line = this.rows.get(entry.id)?.querySelector('.job-status');
        if (line) line.textContent = this.statusText(entry);
      }
    }, 3000);
    // Another tab added or finished a download: show the same queue.
    window.addEventListener('storage', (event) => {
      if (event.key !== STORAGE_KEY) return;
      this.entries = load();
      this.render();
      this.followRunning();
    });
  }

  save() {
    try {
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(this.entries.slice(0, MAX_ENTRIES)));
    } catch {
      // Storage full or refused: the queue lives until the page is closed.
    }
  }

  /** Shows the stored queue and reattaches to the event streams of the jobs still running. */
  start() {
    // A finished job's file is kept only so long (ARTIFACT_TTL_SECONDS): past its time, say so.
    for (const entry of this.entries) {
      if (entry.status === 'completed' && entry.artifact && Date.parse(entry.artifact.expires_at) < Date.now())
        entry.status = 'expired';
    }
    this.save();
    this.render();
    this.followRunning();
    // Stored completed without its file (an earlier version of this page did so for a job made before): read it.
    for (const entry of this.entries)
      if (entry.kind !== 'direct' && entry.status === 'completed' && !entry.artifact) this.collect(entry, false);
  }

  followRunning() {
    for (const entry of this.entries) if (entry.kind !== 'direct' && !TERMINAL.has(entry.status)) this.follow(entry);
  }

  /** Adds a download at the top (a job already listed is moved up, not doubled). @param {Omit<Entry, 'created'>} fields */
  add(fields) {
    const existing = this.entries.find((e) => e.id === fields.id);
    this.entries = [
      { ...existing, ...fields, created: Date.now() },
      ...this.entries.filter((e) => e.id !== fields.id),
    ].slice(0, MAX_ENTRIES);
    this.save();
    this.render();
    const entry = this.entries[0];
    if (entry.kind !== 'direct' && !TERMINAL.has(entry.status)) this.follow(entry);
    // Made before: the server answered with a job it had finished, so its file is there to take now.
    else if (entry.kind !== 'direct' && entry.status === 'completed') this.collect(entry, true);
    this.rows.get(entry.id)?.scrollIntoView({ block: 'nearest' });
  }

  /**
   * A job that had completed before this page heard of it: reads its file (the 202 names none) and,
   * when the person just asked for it (`save`), saves it at once, as for a job seen finishing here.
   * @param {Entry} entry @param {boolean} save
   */
  collect(entry, save) {
    api(`/api/v1/jobs/${encodeURIComponent(entry.id)}`)
      .then((job) => {
        this.patch(entry.id, fieldsOf(job));
        const current = this.entry(entry.id);
        if (!save || !current?.artifact || job.status !== 'completed' || current.saved) return;
        saveLink(current.artifact.url, current.artifact.filename);
        this.patch(entry.id, { saved: true });
        this.parts.announce(() => t('front:madeBefore', { title: entry.title }), 'quiet');
      })
      .catch((err) => {
        this.parts.announce(wordsOf(err), 'error');
        // Offline or the server restarting: the row waits for a reload to ask again.
        if (err.code === 'network_error' || err.status >= 500) return;
        this.patch(
          entry.id,
          err.status === 404 ? { status: 'failed', unknown: true } : { status: 'failed', error: keptReason(err) },
        );
      });
  }

  /** @param {Entry} entry */
  follow(entry) {
    if (this.streams.has(entry.id)) return;
    const source = new EventSource(`/api/v1/jobs/${encodeURIComponent(entry.id)}/events`);
    this.streams.set(entry.id, source);
    this.heard(entry.id);
    source.addEventListener('job', (event) => {
      this.heard(entry.id);
      let job;
      try {
        job = JSON.parse(/** @type {MessageEvent} */ (event).data);
      } catch {
        return;
      }
      this.update(entry.id, job);
      if (TERMINAL.has(job.status)) this.unfollow(entry.id);
    });
    source.addEventListener('error', () => {
      // The browser reconnects by itself (from the last event id) unless the answer was not a stream:
      // then ask once what became of the job.
      if (source.readyState !== EventSource.CLOSED) return;
      this.recheck(entry);
    });
  }

  /**
   * A job's stream said something: its silence timer starts again. An EventSource shows no comment
   * lines, so the server's 15 s heartbeat cannot prove the connection alive; a job with no event for
   * SILENCE_MS is asked after and its stream opened anew. A connection a network dropped without a
   * word (a phone changing networks) otherwise showed "Working" for ever.
   * @param {string} id
   */
  heard(id) {
    clearTimeout(this.silence.get(id));
    this.silence.set(
      id,
      setTimeout(() => {
        const entry = this.entry(id);
        if (entry && this.streams.has(id)) this.recheck(entry);
      }, SILENCE_MS),
    );
  }

  /** Stops following a job, asks what became of it, and follows it again unless it has ended. @param {Entry} entry */
  recheck(entry) {
    this.unfollow(entry.id);
    api(`/api/v1/jobs/${encodeURIComponent(entry.id)}`)
      .then((job) => {
        this.update(entry.id, job);
        if (!TERMINAL.has(job.status)) setTimeout(() => this.follow(this.entry(entry.id) ?? entry), 2000);
      })
      .catch((err) => {
        // Offline or the server restarting: the job may well be running; look again later.
        if (err.code === 'network_error' || err.status >= 500)
          setTimeout(() => this.follow(this.entry(entry.id) ?? entry), 5000);
        else
          this.patch(
            entry.id,
            err.status === 404 ? { status: 'failed', unknown: true } : { status: 'failed', error: keptReason(err) },
          );
      });
  }

  unfollow(id) {
    this.streams.get(id)?.close();
    this.streams.delete(id);
    clearTimeout(this.silence.get(id));
    this.silence.delete(id);
  }

  entry(id) {
    return this.entries.find((e) => e.id === id);
  }

  /** @param {string} id @param {Partial<Entry>} fields */
  patch(id, fields) {
    const entry = this.entry(id);
    if (!entry) return;
    Object.assign(entry, fields);
    this.save();
    this.renderRow(entry);
  }

  /** A Job from the server, onto its entry. @param {string} id @param {any} job */
  update(id, job) {
    const entry = this.entry(id);
    if (!entry) return;
    const before = entry.status;
    if (job.status === 'processing' && !this.firstSample.has(id))
      this.firstSample.set(id, { at: Date.now(), progress: Math.round(job.progress ?? 0) });
    this.patch(id, fieldsOf(job));
    if (job.status === before) return;
    // The row says how it ended; the status line, which may still say the file is being made, tells
    // screen readers without showing the same words twice.
    if (job.status === 'completed') {
      this.parts.announce(() => t('front:announceReady', { title: entry.title }), 'quiet');
      // Seen finishing here (not on a reload of a long-finished job): save it without another click.
      if (entry.artifact && !entry.saved && before && !TERMINAL.has(before)) {
        saveLink(entry.artifact.url, entry.artifact.filename);
        this.patch(id, { saved: true });
      }
    } else if (job.status === 'failed')
      this.parts.announce(
        () => t('front:announceFailed', { title: entry.title, reason: job.error?.message ?? t('front:noReason') }),
        'quiet',
      );
    else if (job.status === 'cancelled')
      this.parts.announce(() => t('front:announceCancelled', { title: entry.title }), 'quiet');
  }

  render() {
    this.parts.section.hidden = this.entries.length === 0;
    const rows = this.entries.map((entry) => this.renderRow(entry, false));
    this.parts.list.replaceChildren(...rows);
    for (const id of [...this.rows.keys()]) if (!this.entry(id)) this.rows.delete(id);
    this.parts.clear.hidden = !this.entries.some((e) => TERMINAL.has(e.status) || e.status === 'saved');
  }

  /** Builds (or rebuilds in place) one entry's row. @param {Entry} entry */
  renderRow(entry, replace = true) {
    const id = `q-${entry.id.replace(/[^A-Za-z0-9_-]/g, '')}`;
    const running = !TERMINAL.has(entry.status) && entry.status !== 'saved';
    const statusText = this.statusText(entry);
    const kind =
      entry.status === 'failed' || entry.status === 'expired'
        ? 'error'
        : entry.status === 'completed' || entry.status === 'saved'
          ? 'success'
          : 'info';
    const bar =
      running && entry.kind !== 'direct'
        ? el(
            'div',
            { class: 'progress-row' },
            el('progress', {
              max: 100,
              value: entry.kind === 'record' ? null : (entry.progress ?? 0),
              'aria-labelledby': `${id}-title`,
              'aria-describedby': `${id}-status`,
            }),
            entry.kind === 'record'
              ? null
              : el('span', { class: 'percent', 'aria-hidden': 'true' }, `${entry.progress ?? 0}%`),
          )
        : null;
    const row = el(
      'li',
      { class: 'card job', 'data-job-id': entry.id, 'data-status': entry.status },
      el(
        'div',
        { class: 'job-head' },
        el('strong', { id: `${id}-title`, class: 'job-title' }, entry.title),
        el('span', { class: 'badge', 'data-status': entry.status }, badgeText(entry)),
      ),
      bar,
      el('p', { id: `${id}-status`, class: 'job-status', 'data-kind': kind }, statusText),
      this.actions(entry),
    );
    const old = this.rows.get(entry.id);
    this.rows.set(entry.id, row);
    if (replace && old?.isConnected) {
      // Keep the keyboard where it was: a focused button is found again by its role in the new row.
      const focused = old.contains(document.activeElement) ? document.activeElement?.getAttribute('data-action') : null;
      old.replaceWith(row);
      if (focused) /** @type {HTMLElement | null} */ (row.querySelector(`[data-action="${focused}"]`))?.focus();
      this.parts.clear.hidden = !this.entries.some((e) => TERMINAL.has(e.status) || e.status === 'saved');
    }
    return row;
  }

  /** @param {Entry} entry */
  statusText(entry) {
    switch (entry.status) {
      case 'saved':
        return t('front:savedByBrowser', { filename: entry.filename ?? '' });
      case 'queued':
        return t('front:waiting');
      case 'processing': {
        if (entry.kind === 'record') return t('front:recordingFor', { time: duration(entry.recording ?? 0) });
        const left = timeLeft(this.firstSample.get(entry.id), entry.progress ?? 0, Date.now());
        const parts = [detail(entry) ?? t('front:making')];
        if (left !== null) parts.push(t('front:timeLeft', { time: duration(left) }));
        return parts.join(' · ');
      }
      case 'completed': {
        if (entry.kind === 'record') return t('front:recorded', { time: duration(entry.recording ?? 0) });
        // (Made before: its file is being asked for.)
        if (!entry.artifact) return t('front:collecting');
        return [detail(entry), t('front:ready', { size: formatBytes(entry.artifact.size) })]
          .filter(Boolean)
          .join(' · ');
      }
      case 'failed':
        return t('front:failed', {
          reason: entry.unknown ? t('front:jobUnknown') : (entry.error ?? t('front:noReason')),
        });
      case 'expired':
        return t('front:expired');
      case 'cancelled':
        return t('front:cancelled');
      default:
        return entry.status;
    }
  }

  /** @param {Entry} entry */
  actions(entry) {
    const box = el('div', { class: 'job-actions' });
    const label = (key) => t(key, { title: entry.title });
    if (entry.status === 'completed' && entry.artifact) {
      box.append(
        el(
          'a',
          {
            class: 'button primary',
            href: entry.artifact.url,
            download: entry.artifact.filename,
            'data-action': 'save',
          },
          t('front:save', { filename: entry.artifact.filename }),
        ),
      );
    }
    if (entry.kind === 'record' && entry.status === 'processing') {
      const stop = el(
        'button',
        {
          type: 'button',
          class: 'small',
          'data-action': 'stop',
          'aria-label': label('front:stopLabel'),
          disabled: entry.stopping === true,
        },
        t(entry.stopping ? 'front:stopping' : 'front:stop'),
      );
      stop.addEventListener('click', () => this.control(entry, stop, 'stop'));
      box.append(stop);
    }
    if (entry.kind !== 'direct' && !TERMINAL.has(entry.status)) {
      const cancel = el(
        'button',
        { type: 'button', class: 'small', 'data-action': 'cancel', 'aria-label': label('front:cancelLabel') },
        t('front:cancel'),
      );
      cancel.addEventListener('click', () => this.control(entry, cancel, 'cancel'));
      box.append(cancel);
    }
    if (TERMINAL.has(entry.status) || entry.status === 'saved') {
      const remove = el(
        'button',
        { type: 'button', class: 'small', 'data-action': 'remove', 'aria-label': label('front:removeLabel') },
        t('front:remove'),
      );
      remove.addEventListener('click', () => {
        this.entries = this.entries.filter((e) => e.id !== entry.id);
        this.save();
        this.render();
        /** @type {HTMLElement | null} */ (this.parts.list.querySelector('button, a'))?.focus();
      });
      box.append(remove);
    }
    return box;
  }

  /** Cancels a job (DELETE) or stops a recording (POST …/stop); the event stream shows the end. */
  async control(entry, button, what) {
    button.disabled = true;
    const url = `/api/v1/jobs/${encodeURIComponent(entry.id)}`;
    const headers = controlHeaders(this.entry(entry.id)?.token ?? entry.token);
    try {
      if (what === 'cancel') await api(url, { method: 'DELETE', headers });
      else {
        await api(`${url}/stop`, { method: 'POST', headers });
        // On the entry, so a redrawn row (a language switch, an event) still says it is stopping.
        this.patch(entry.id, { stopping: true });
      }
    } catch (err) {
      this.parts.announce(wordsOf(err), 'error');
      button.disabled = false;
    }
  }
}

/** What a Job from the server changes on its entry. @param {any} job @returns {Partial<Entry>} */
function fieldsOf(job) {
  /** @type {Partial<Entry>} */
  const fields = {
    status: job.status,
    progress: Math.round(job.status === 'completed' ? 100 : (job.progress ?? 0)),
    error: job.error?.message,
  };
  if (job.recording) fields.recording = job.recording.seconds;
  if (job.entries)
    fields.counts = { done: job.entries.completed, total: job.entries.total, failed: job.entries.failed ?? 0 };
  if (job.artifact) fields.artifact = job.artifact;
  return fields;
}

/** A collection's "3 of 5 done, 1 failed", in the language of the moment. @param {Entry} entry */
function detail(entry) {
  const counts = entry.counts;
  if (!counts) return entry.detail;
  return [
    t('front:entriesDone', { done: counts.done, total: counts.total }),
    counts.failed ? t('front:entriesFailed', { count: counts.failed }) : null,
  ]
    .filter(Boolean)
    .join(', ');
}

/** The badge's word: the status, and "Recording" for a recording that runs. @param {Entry} entry */
function badgeText(entry) {
  if (entry.kind === 'record' && entry.status === 'processing') return t('front:statusRecording');
  return t(`front:status${entry.status.charAt(0).toUpperCase()}${entry.status.slice(1)}`);
}

/** Hands a same-origin URL to the browser's own download (streamed to disk, never held here). */
export function saveLink(href, filename) {
  const link = el('a', { href, download: filename ?? '', hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
}
