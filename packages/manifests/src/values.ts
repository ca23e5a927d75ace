// Numbers as manifests write them: xs:duration (an MPD's durations and periods, also JSON-LD's
// durations, which the extractors read with this) and attributes that must be positive to mean anything.

const NUM = String.raw`(\d+(?:[.,]\d+)?)`;
// P(?!$) and T(?=\d) refuse the empty forms "P", "PT" and "P1DT".
const ISO_DURATION = new RegExp(
  `^P(?!$)(?:${NUM}Y)?(?:${NUM}M)?(?:${NUM}W)?(?:${NUM}D)?(?:T(?=\\d)(?:${NUM}H)?(?:${NUM}M)?(?:${NUM}S)?)?$`,
  'i',
);

/**
 * Seconds of an ISO 8601 duration / xs:duration ("PT1M2.5S", "P1DT2H", "PT0,5S"); years and months
 * count as 365 and 30 days, as in yt-dlp. Undefined when the text is not one.
 */
export function isoDuration(text: string | undefined): number | undefined {
  const m = text ? ISO_DURATION.exec(text.trim()) : null;
  if (!m) return undefined;
  const [y, mo, w, d, h, mi, s] = m.slice(1).map((v) => Number((v ?? '0').replace(',', '.')));
  return (((y * 365 + mo * 30 + w * 7 + d) * 24 + h) * 60 + mi) * 60 + s;
}

/** A number above zero from an attribute's text ("12", " 2.5 "); anything else is undefined. */
export function positive(v: string | number | undefined): number | undefined {
  const n = typeof v === 'string' && v.trim() ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}
