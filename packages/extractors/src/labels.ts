// Reading the loose values pages put in attributes, meta tags and JSON-LD: player labels ("720p",
// "1080p HD", "1500k", "1920x1080"), sizes ("12.5 MB"), durations (ISO 8601 "PT1H2M3.5S", "1:02:03",
// plain seconds) and type attributes (`video/mp4; codecs="avc1.42E01E, mp4a.40.2"`).
import { isoDuration } from '@reelay/manifests';

/** A finite number from a number, a numeric string ("1280", "1280px") or a schema.org QuantitativeValue. */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)/.exec(value);
    return m ? Number(m[1]) : undefined;
  }
  if (value && typeof value === 'object' && !Array.isArray(value) && 'value' in value) {
    const inner = (value as { value: unknown }).value;
    return typeof inner === 'object' ? undefined : toNumber(inner);
  }
  return undefined;
}

export interface Resolution {
  width?: number;
  height?: number;
}

/** Resolution named by a label: "1920x1080", "720p", "1080p60 HD", "4K". */
export function parseResolution(label: string | undefined): Resolution {
  if (!label) return {};
  const wh = /(?<![\d.])(\d{2,5})\s*[x×]\s*(\d{2,5})(?!\d)/i.exec(label);
  if (wh) return { width: Number(wh[1]), height: Number(wh[2]) };
  const p = /(?<![a-z0-9])(\d{3,4})[pi](?:\d{2,3})?(?![a-z0-9])/i.exec(label);
  if (p) return { height: Number(p[1]) };
  // Marketing names for UHD: "4K" is 2160 lines, "8K" 4320 (yt-dlp's parse_resolution does the same).
  const k = /(?<![a-z0-9.])([48])k(?![a-z0-9])/i.exec(label);
  if (k) return { height: Number(k[1]) * 540 };
  return {};
}

/** Bits per second named by a label: "1500k", "1500 kbps", "2.5 Mbps", "128000bps". */
export function parseBitrate(label: string | undefined): number | undefined {
  if (!label) return undefined;
  const m = /(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([km]?)(bps|bit\/s|b\/s|b)?(?![a-z0-9])/i.exec(label);
  if (!m || (!m[2] && !m[3])) return undefined;
  const value = Number(m[1]);
  const unit = m[2].toLowerCase();
  // "4k"/"8k" without "bps" is a resolution, not a bitrate.
  if (unit === 'k' && !m[3] && (value === 4 || value === 8)) return undefined;
  const bps = value * (unit === 'm' ? 1_000_000 : unit === 'k' ? 1000 : 1);
  return bps > 0 ? Math.round(bps) : undefined;
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** Bytes from a number or a string like "12.5 MB" or "1048576". */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(value);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * SIZE_UNITS[(m[2] ?? '').toLowerCase()]);
}

/** Seconds from ISO 8601 ("PT1H2M3.5S", "P0DT0H5M"), a clock ("1:02:03") or plain seconds. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text);
  const clock = /^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d+)?)$/.exec(text);
  if (clock) return Number(clock[1] ?? 0) * 3600 + Number(clock[2]) * 60 + Number(clock[3]);
  return isoDuration(text);
}

/** The MIME type (lower case, without parameters) and the codecs parameter of a type attribute. */
export function parseTypeAttr(type: string | undefined): { mime?: string; codecs?: string } {
  if (!type) return {};
  const mime = type.split(';')[0].trim().toLowerCase() || undefined;
  const c = /codecs\s*=\s*(?:"([^"]*)"|'([^']*)'|([^;\s]+))/i.exec(type);
  const codecs = (c?.[1] ?? c?.[2] ?? c?.[3])?.trim() || undefined;
  return { mime, codecs };
}

/** Trims and collapses whitespace; undefined when nothing is left. */
export function cleanText(text: string | undefined): string | undefined {
  const clean = text?.replace(/\s+/g, ' ').trim();
  return clean || undefined;
}
