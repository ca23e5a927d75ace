// The yt-dlp differential harness's comparison: runs reelay's parsers (hls.ts, dash.ts, html5.ts,
// jsonld.ts) on a corpus case, reads yt-dlp's formats for the same case (from ytdlp-parsers.py),
// brings both to one record per URL, and lists every field on which they disagree.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReelayError } from '@reelay/contracts';
import { splitCodecs } from '@reelay/manifests';
import { parseMpd } from '../src/dash.js';
import { parseHls } from '../src/hls.js';
import { toDraft } from '../src/html.js';
import { html5Candidates } from '../src/html5.js';
import { jsonLdCandidates } from '../src/jsonld.js';
import { parsePage } from '../src/page.js';
import type { SourceDraft } from '../src/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CORPUS_DIR = path.join(here, 'corpus');
const SCRIPT = path.join(here, 'ytdlp-parsers.py');
/** Debian's python3, where the yt-dlp package installs its module (a pyenv python3 on PATH lacks it). */
export const PYTHON = '/usr/bin/python3';

export type Kind = 'hls' | 'dash' | 'html5' | 'jsonld';

export interface Case {
  id: string;
  kind: Kind;
  file: string;
  /** The URL the document is read as coming from: relative URLs resolve against it. */
  url: string;
  about: string;
}

/** A deliberate difference: a field on which reelay and yt-dlp disagree in the listed cases, and why. */
export interface Difference {
  fields: Field[];
  cases: string[];
  reason: string;
}

export const readCases = (): Case[] =>
  JSON.parse(fs.readFileSync(path.join(CORPUS_DIR, 'index.json'), 'utf8')) as Case[];
export const readDifferences = (): Difference[] =>
  JSON.parse(fs.readFileSync(path.join(CORPUS_DIR, 'differences.json'), 'utf8')) as Difference[];
export const caseText = (c: Case): string => fs.readFileSync(path.join(CORPUS_DIR, c.file), 'utf8');

/** What both sides say about one URL. kbps as yt-dlp reports tbr; `only` is video-only/audio-only. */
interface Rec {
  url: string;
  /** hls or dash when the URL is a manifest to expand (found on a page). */
  manifest?: string;
  width?: number;
  height?: number;
  kbps?: number;
  vcodec?: string;
  acodec?: string;
  only?: 'video' | 'audio';
  language?: string;
}

const FIELDS = ['width', 'height', 'kbps', 'vcodec', 'acodec', 'only', 'language'] as const;
export type Field = (typeof FIELDS)[number] | 'manifest' | 'missing' | 'extra' | 'subtitles' | 'error';

export interface Disagreement {
  field: Field;
  url?: string;
  reelay?: unknown;
  ytdlp?: unknown;
}

export interface YtFormat {
  url?: string;
  format_id?: string;
  protocol?: string;
  manifest_url?: string;
  manifest?: string;
  segmented?: boolean;
  has_drm?: boolean;
  width?: number;
  height?: number;
  tbr?: number;
  vcodec?: string;
  acodec?: string;
  language?: string;
}
export type YtResult = { formats: YtFormat[]; subtitles: Record<string, string[]> } | { error: string };

/** yt-dlp's parsers on every case, in one python process. */
export function runYtdlp(cases: readonly Case[]): { version: string; results: Record<string, YtResult> } {
  const input = JSON.stringify(cases.map((c) => ({ id: c.id, kind: c.kind, url: c.url, text: caseText(c) })));
  const run = spawnSync(PYTHON, [SCRIPT], { input, encoding: 'utf8', maxBuffer: 16 << 20, timeout: 120_000 });
  if (run.status !== 0)
    throw new Error(`ytdlp-parsers.py failed (${run.status ?? run.signal}): ${run.stderr.slice(-2000)}`);
  return JSON.parse(run.stdout) as { version: string; results: Record<string, YtResult> };
}

export function hasYtdlp(): boolean {
  return spawnSync(PYTHON, ['-c', 'import yt_dlp'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

/** URLs compared as WHATWG resolves them: yt-dlp leaves ../ and //host for later stages to resolve. */
function resolved(url: string, base: string): string {
  return URL.canParse(url, base) ? new URL(url, base).href : url;
}

function fromDraft(s: SourceDraft): Rec {
  const { video, audio } = splitCodecs(s.codecs);
  return {
    url: s.url,
    width: s.width,
    height: s.height,
    kbps: s.bitrate === undefined ? undefined : s.bitrate / 1000,
    vcodec: video[0],
    acodec: audio[0],
    only: s.has_video === false ? 'audio' : s.has_audio === false ? 'video' : undefined,
    language: s.language,
  };
}

/** reelay's records for a case, or the error code it refuses the document with. */
export function reelayRecords(c: Case): { records: Rec[]; subtitles: Record<string, string[]>; error?: string } {
  const text = caseText(c);
  const url = new URL(c.url);
  // Subtitle tracks by language, as yt-dlp groups them: {en: [url, …]}.
  const byLanguage = (tracks: readonly { language: string; url: string }[]): Record<string, string[]> => {
    const out: Record<string, string[]> = {};
    for (const t of tracks) (out[t.language] ??= []).push(t.url);
    return out;
  };
  try {
    if (c.kind === 'hls' || c.kind === 'dash') {
      const items = c.kind === 'hls' ? parseHls(text, url) : parseMpd(text, url);
      return {
        records: items.flatMap((m) => m.sources.map(fromDraft)),
        subtitles: byLanguage(items.flatMap((m) => m.subtitles ?? [])),
      };
    }
    const page = parsePage(text);
    const candidates =
      c.kind === 'html5' ? html5Candidates(page.media, url) : jsonLdCandidates(page.jsonLd, url, url.href);
    return {
      records: candidates.flatMap((cand) =>
        cand.sources.map((s) => (s.manifest ? { url: s.url, manifest: s.manifest } : fromDraft(toDraft(s, {})))),
      ),
      subtitles: byLanguage(candidates.flatMap((cand) => cand.subtitles ?? [])),
    };
  } catch (err) {
    if (err instanceof ReelayError) return { records: [], subtitles: {}, error: err.code };
    throw err;
  }
}

const real = (codec: string | undefined): string | undefined => (codec && codec !== 'none' ? codec : undefined);

/** A yt-dlp format's kind as reelay's DASH parser names it: a format with no video is audio. */
const dashKind = (f: YtFormat): string => (f.vcodec === 'none' ? 'audio' : 'video');

/** yt-dlp's records for a case: DRM formats dropped (yt-dlp refuses to download them, as reelay does). */
export function ytdlpRecords(c: Case, result: YtResult): Rec[] {
  if ('error' in result) return [];
  const formats = result.formats.filter((f) => !f.has_drm && f.url);
  // An id that segmented formats of different kinds share: reelay names the kind too (&type=audio).
  const kinds = new Map<string, Set<string>>();
  for (const f of formats)
    if (f.segmented && f.format_id) kinds.set(f.format_id, (kinds.get(f.format_id) ?? new Set()).add(dashKind(f)));
  return formats.map((f) => {
    // A segmented DASH representation is downloaded through the manifest: reelay names it
    // MPD#representation=ID, as the existing oracle test maps it.
    const id = f.format_id ?? '';
    const type = (kinds.get(id)?.size ?? 0) > 1 ? `&type=${dashKind(f)}` : '';
    const url =
      f.segmented && f.manifest_url
        ? `${f.manifest_url.split('#')[0]}#representation=${encodeURIComponent(id)}${type}`
        : resolved(f.url!, c.url);
    if (f.manifest) return { url, manifest: f.manifest };
    const only =
      f.vcodec === 'none' && f.acodec !== 'none'
        ? 'audio'
        : f.acodec === 'none' && f.vcodec !== 'none'
          ? 'video'
          : undefined;
    return {
      url,
      width: f.width,
      height: f.height,
      kbps: f.tbr,
      vcodec: real(f.vcodec),
      acodec: real(f.acodec),
      only,
      language: f.language,
    } satisfies Rec;
  });
}

/** One record per URL: a URL listed again (a variant per audio group, a period) adds what it knows. */
function byUrl(records: readonly Rec[]): Map<string, Rec> {
  const map = new Map<string, Rec>();
  for (const r of records) {
    const seen = map.get(r.url);
    if (!seen) map.set(r.url, { ...r });
    else
      for (const [k, v] of Object.entries(r))
        if (v !== undefined) (seen as unknown as Record<string, unknown>)[k] ??= v;
  }
  return map;
}

function sameTracks(ours: Record<string, string[]>, theirs: Record<string, string[]>, base: string): boolean {
  const norm = (tracks: Record<string, string[]>, resolve: boolean) =>
    JSON.stringify(
      Object.entries(tracks)
        .map(([lang, urls]) => [lang, urls.map((u) => (resolve ? resolved(u, base) : u)).sort()])
        .sort(),
    );
  return norm(ours, false) === norm(theirs, true);
}

const differs = (field: (typeof FIELDS)[number], a: unknown, b: unknown): boolean =>
  field === 'kbps' && typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) > 1 : a !== b;

/** Every disagreement between reelay's and yt-dlp's reading of a case. */
export function compare(c: Case, result: YtResult): Disagreement[] {
  const reelay = reelayRecords(c);
  const ours = byUrl(reelay.records);
  const theirs = byUrl(ytdlpRecords(c, result));
  const out: Disagreement[] = [];
  if ('error' in result) out.push({ field: 'error', ytdlp: result.error });
  for (const [url, t] of theirs) if (!ours.has(url)) out.push({ field: 'missing', url, ytdlp: t });
  for (const [url, o] of ours) {
    const t = theirs.get(url);
    if (!t) {
      out.push({ field: 'extra', url, reelay: o });
      continue;
    }
    // A manifest found on a page is compared by URL and kind: its formats are the manifest parsers' business.
    if (o.manifest !== t.manifest) out.push({ field: 'manifest', url, reelay: o.manifest, ytdlp: t.manifest });
    if (o.manifest || t.manifest) continue;
    for (const field of FIELDS)
      if (differs(field, o[field], t[field])) out.push({ field, url, reelay: o[field], ytdlp: t[field] });
  }
  // Subtitles: the same languages, each with the same track URLs (order aside).
  if (!('error' in result) && !sameTracks(reelay.subtitles, result.subtitles, c.url))
    out.push({ field: 'subtitles', reelay: reelay.subtitles, ytdlp: result.subtitles });
  return out;
}
