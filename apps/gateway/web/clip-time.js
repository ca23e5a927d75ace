// @ts-check
// Clip times as a person types and reads them: seconds or [h:]mm:ss. No imports, so the tests read
// these two functions without a page (clip.js, the fields around them, needs the page's i18n).

/** Seconds from "90", "90.5", "1:30" or "1:02:03.5"; null when empty, NaN when unreadable. @param {string} text */
export function parseTime(text) {
  const value = text.trim();
  if (value === '') return null;
  if (!/^\d+(\.\d+)?$|^\d+(:[0-5]?\d){1,2}(\.\d+)?$/.test(value)) return Number.NaN;
  return value.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

/** "1:05.5" from 65.5, "1:02:03" from 3723: what a person would type back. @param {number} seconds */
export function showTime(seconds) {
  const ms = Math.round(seconds * 1000); // rounded first, so 59.9996 is 1:00, not 0:60
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  const pad = (/** @type {number} */ n) => `${n < 10 ? '0' : ''}${n}`;
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}
