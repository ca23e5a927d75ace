// @ts-check
// Same-origin JSON calls to the gateway, and the small DOM helpers both pages share. Failures become
// ApiError with the envelope's readable message, so pages only ever show `error.message`. The server's
// messages are English: in another language they come with a translated lead-in (common:error.server).
import { formatDate, formatNumber, t } from './i18n.js';

export class ApiError extends Error {
  /**
   * @param {number} status @param {string} code @param {string} message
   * @param {() => string} [words] the message again in the language of the moment (after a switch)
   * @param {string} [serverMessage] the envelope's own message, without a lead-in: what is kept
   *   (in localStorage) and worded again in whatever language is shown later
   */
  constructor(status, code, message, words = () => message, serverMessage = undefined) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.words = words;
    this.serverMessage = serverMessage;
  }
}

/**
 * An error's message as a function of the language: an ApiError's words, else its fixed message.
 * @param {unknown} err @returns {() => string}
 */
export function wordsOf(err) {
  if (err instanceof ApiError) return err.words;
  const message = err instanceof Error ? err.message : String(err);
  return () => message;
}

/**
 * What a failure is kept as (in the queue's localStorage): the server's own message without the
 * lead-in of the language of the moment, so it is worded again in whichever language is shown.
 * @param {unknown} err @returns {string}
 */
export function keptReason(err) {
  if (err instanceof ApiError) return err.serverMessage ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

/** An ApiError whose message is a catalog key's text. @param {number} status @param {string} code @param {string} key */
export function keyedError(status, code, key) {
  return new ApiError(status, code, t(key), () => t(key));
}

/**
 * Sends a request; a JSON body is sent as application/json. Resolves with the Response whatever its
 * status, rejects with an ApiError only when the server cannot be reached.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, signal?: AbortSignal, headers?: Record<string, string> }} [options]
 */
export async function send(path, { method = 'GET', body, signal, headers: extra } = {}) {
  /** @type {Record<string, string>} */
  const headers = { ...extra, Accept: 'application/json' };
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', signal };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(path, init);
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw keyedError(0, 'network_error', 'common:error.network');
  }
}

/** The ApiError for a failed response, from its error envelope when it has one. @param {Response} res */
export async function errorOf(res) {
  const payload = await res.json().catch(() => null);
  const error = payload && payload.error;
  if (error && typeof error.message === 'string') {
    const words = () => t('common:error.server', { message: error.message });
    return new ApiError(res.status, error.code ?? 'error', words(), words, error.message);
  }
  const words = () => t('common:error.http', { status: `${res.status} ${res.statusText}`.trim() });
  return new ApiError(res.status, 'http_error', words(), words);
}

/**
 * A JSON call: resolves with the response's data (the `data` of a success envelope, else the body;
 * null for 204), rejects with an ApiError.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, signal?: AbortSignal, headers?: Record<string, string> }} [options]
 */
export async function api(path, options) {
  const res = await send(path, options);
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return null;
  const payload = await res.json().catch(() => null);
  return payload && payload.success === true && 'data' in payload ? payload.data : payload;
}

/**
 * Creates an element: `el('button', { type: 'button', class: 'x', onclick }, 'Label')`.
 * Attributes starting with `on` become listeners; null and false attributes are left out.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function')
      node.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name in node && typeof value !== 'string') node[name] = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** 1536 → "1.5 KB" ("1,5 KB" in German). @param {number | null | undefined} bytes */
export function formatBytes(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return t('common:none');
  const units = ['common:bytes.B', 'common:bytes.KB', 'common:bytes.MB', 'common:bytes.GB', 'common:bytes.TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 ? 0 : value < 10 ? 1 : 0;
  const shown = formatNumber(value, { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return t(units[unit], { value: shown });
}

const THIS_YEAR = /** @type {Intl.DateTimeFormatOptions} */ ({
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
});
const OTHER_YEAR = /** @type {Intl.DateTimeFormatOptions} */ ({ ...THIS_YEAR, year: 'numeric' });

/** A <time> element for an ISO date in the page's language (the year only when it is not this one), or the fallback text. */
export function timeEl(iso, fallback = t('common:none')) {
  if (!iso) return document.createTextNode(fallback);
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return document.createTextNode(fallback);
  const options = date.getFullYear() === new Date().getFullYear() ? THIS_YEAR : OTHER_YEAR;
  return el(
    'time',
    { datetime: date.toISOString(), title: formatDate(date, { dateStyle: 'medium', timeStyle: 'medium' }) },
    formatDate(date, options),
  );
}

/**
 * How a status line shows a message: `error` and `success` in their colours; `quiet` only to screen
 * readers (visually hidden), for news that something else on the page already shows.
 * @typedef {'info' | 'error' | 'success' | 'quiet'} SayKind
 */

/**
 * Writes a message into a status region (an aria-live element). Kind `error` styles it as an error.
 * The region stays in the page when empty (CSS collapses it), so screen readers keep watching it.
 * @param {HTMLElement} region @param {string} message @param {SayKind} [kind]
 */
export function say(region, message, kind = 'info') {
  region.textContent = message;
  region.dataset.kind = kind;
}

/**
 * What makes this browser a job's creator: its control token (from the 202 that started the job) as
 * a bearer token, for the job's cancel and stop. @param {string | undefined} token
 * @returns {Record<string, string>}
 */
export function controlHeaders(token) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}
