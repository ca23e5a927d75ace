// @ts-check
// Same-origin JSON calls to the gateway, and the small DOM helpers both pages share. Failures become
// ApiError with the envelope's readable message, so pages only ever show `error.message`.

export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * Sends a request; a JSON body is sent as application/json. Resolves with the Response whatever its
 * status, rejects with an ApiError only when the server cannot be reached.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, signal?: AbortSignal }} [options]
 */
export async function send(path, { method = 'GET', body, signal } = {}) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
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
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');
  }
}

/** The ApiError for a failed response, from its error envelope when it has one. @param {Response} res */
export async function errorOf(res) {
  const payload = await res.json().catch(() => null);
  const error = payload && payload.error;
  if (error && typeof error.message === 'string') return new ApiError(res.status, error.code ?? 'error', error.message);
  return new ApiError(res.status, 'http_error', `The server answered ${res.status} ${res.statusText}.`.replace(' .', '.'));
}

/**
 * A JSON call: resolves with the response's data (the `data` of a success envelope, else the body;
 * null for 204), rejects with an ApiError.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, signal?: AbortSignal }} [options]
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
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name in node && typeof value !== 'string') node[name] = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** 1536 → "1.5 KB". @param {number | null | undefined} bytes */
export function formatBytes(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

const thisYear = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
const otherYear = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });

/** A <time> element for an ISO date (the year only when it is not this one), or the fallback text. */
export function timeEl(iso, fallback = '—') {
  if (!iso) return document.createTextNode(fallback);
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return document.createTextNode(fallback);
  const format = date.getFullYear() === new Date().getFullYear() ? thisYear : otherYear;
  return el('time', { datetime: date.toISOString(), title: date.toLocaleString() }, format.format(date));
}

/**
 * Writes a message into a status region (an aria-live element). Kind `error` styles it as an error.
 * The region stays in the page when empty (CSS collapses it), so screen readers keep watching it.
 * @param {HTMLElement} region @param {string} message @param {'info' | 'error' | 'success'} [kind]
 */
export function say(region, message, kind = 'info') {
  region.textContent = message;
  region.dataset.kind = kind;
}
