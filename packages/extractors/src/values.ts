// Coercing untyped values (API JSON, yt-dlp's info JSON, XML attributes, manifest tags) to what a
// source needs: the extractors' one set of readers, so "a positive number" means the same
// everywhere. Durations in ISO 8601 are @reelay/manifests' isoDuration (an MPD's own type).

export type Json = Record<string, unknown>;

// Readers for untyped JSON: each returns undefined unless the value has the expected type.
export const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);

/** A finite number from a number or a numeric string ("12", " 2.5 "); anything else is undefined. */
export function num(v: unknown): number | undefined {
  const n = typeof v === 'string' && v.trim() ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** num(), kept only when above zero: widths, bitrates and sizes of 0 mean "unknown". */
export function positive(v: unknown): number | undefined {
  const n = num(v);
  return n !== undefined && n > 0 ? n : undefined;
}

/** positive(), rounded to a whole number. */
export function positiveInt(v: unknown): number | undefined {
  const n = positive(v);
  return n === undefined ? undefined : Math.round(n);
}

/** A number that may be zero but not negative (a duration, an offset). */
export function nonNegative(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : undefined;
  return n !== undefined && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** A frame rate written as a number or a fraction ("30000/1001" → 29.97, to three decimals). */
export function frameRate(v: unknown): number | undefined {
  if (typeof v === 'string' && v.includes('/')) {
    const [a, b] = v.split('/').map(Number);
    return a > 0 && b > 0 ? Math.round((a / b) * 1000) / 1000 : undefined;
  }
  return positive(v);
}
