// Collection downloads (DESIGN.md "Collections: playlists, channels, feeds"): the request's entry
// selection, the parent job's payload and its children's records, shared by the gateway and the worker.
import { z } from 'zod';
import { ReelayError } from './errors.js';
import { ruleMessage, withRules, type StatedRule } from './stated-rules.js';

/** The queue of collection parents: each waits for its children (download jobs) as a BullMQ flow. */
export const COLLECTION_QUEUE = 'collections';

/** An entry number from 1 to 999999 in at most six digits, leading zeros allowed (0 is no entry). */
const ENTRY_NUMBER = '(?:[1-9]\\d{0,5}|0[1-9]\\d{0,4}|00[1-9]\\d{0,3}|000[1-9]\\d{0,2}|0000[1-9]\\d?|00000[1-9])';
const ENTRY_PART = `${ENTRY_NUMBER}(?:\\s*-\\s*${ENTRY_NUMBER})?`;
/** "1-10,15": numbers and ranges of entries, 1-based, as people count them. */
export const ENTRY_SPEC_PATTERN = new RegExp(`^\\s*${ENTRY_PART}(?:\\s*,\\s*${ENTRY_PART})*\\s*$`);

/** What the pattern cannot say about a selection, as the document states it (stated-rules.ts). */
export const ENTRY_RULES = {
  forwards: {
    rule: 'A range of entries runs forwards: 5-3 is refused',
    code: 'invalid_request',
    message: 'entries range {from}-{to} runs backwards.',
  },
  max: {
    rule: "At most MAX_COLLECTION_ENTRIES entries are selected (this server's setting, 200 by default), counting every number of every range once",
    code: 'invalid_request',
    message: 'entries selects more than MAX_COLLECTION_ENTRIES ({max}) entries.',
  },
} satisfies Record<string, StatedRule>;

export const EntrySelectionSchema = withRules(
  z
    .union([
      z.enum(['all']),
      z
        .string()
        .max(1000)
        .regex(
          ENTRY_SPEC_PATTERN,
          'entries is "all", a list like "1-10,15" (counted from 1), or an array of entry numbers',
        ),
      z.array(z.number().int().min(1).max(999_999)).min(1).max(5_000),
    ])
    .describe('Which entries, 1-based: "all" (default), "1-10,15" or [1, 2, 5]'),
  Object.values(ENTRY_RULES),
);
export type EntrySelection = z.infer<typeof EntrySelectionSchema>;

/** An archive name: a capability, so long enough not to be guessed. */
export const ARCHIVE_NAME_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The selected entry numbers, ascending and unique, or undefined for "all" (every entry listed).
 * More than `max` numbers selected is 400 naming the limit; a range backwards is 400 too.
 */
export function parseEntrySelection(selection: EntrySelection | undefined, max: number): number[] | undefined {
  if (selection === undefined || selection === 'all') return undefined;
  const chosen = new Set<number>();
  const add = (n: number) => {
    if (!Number.isSafeInteger(n) || n < 1)
      throw new ReelayError('invalid_request', `entries counts from 1: ${n} is not an entry number.`);
    chosen.add(n);
    if (chosen.size > max) throw new ReelayError('invalid_request', ruleMessage(ENTRY_RULES.max, { max }));
  };
  if (Array.isArray(selection)) selection.forEach(add);
  else {
    if (!ENTRY_SPEC_PATTERN.test(selection))
      throw new ReelayError(
        'invalid_request',
        'entries is "all", a list like "1-10,15" (counted from 1), or an array of entry numbers.',
      );
    for (const part of selection.split(',')) {
      const [from, to = from] = part.split('-').map((s) => Number(s.trim()));
      if (to < from) throw new ReelayError('invalid_request', ruleMessage(ENTRY_RULES.forwards, { from, to }));
      if (to - from + 1 > max) throw new ReelayError('invalid_request', ruleMessage(ENTRY_RULES.max, { max }));
      for (let n = from; n <= to; n++) add(n);
    }
  }
  return [...chosen].sort((a, b) => a - b);
}

export const ChildStatusSchema = z.enum([
  'queued',
  'processing',
  'completed',
  'failed',
  'skipped',
  'cancelled',
  'expired',
]);
export type ChildStatus = z.infer<typeof ChildStatusSchema>;

/** One selected entry as the parent keeps it: its child job, or why it has none (skipped, failed to resolve). */
export const ChildRecordSchema = z.object({
  index: z.number().int().min(1),
  url: z.string(),
  title: z.string().optional(),
  job_id: z.string().optional(),
  /** Set when the entry has no job: skipped (archive) or failed (nothing to download). */
  status: z.enum(['skipped', 'failed']).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** The archive key of the entry (platform + id, else canonical URL). */
  key: z.string().optional(),
  /** The child job's request_key: entries of two collections with the same requests make the same ZIP. */
  request_key: z.string().optional(),
});
export type ChildRecord = z.infer<typeof ChildRecordSchema>;
export const ChildRecordsSchema = z.array(ChildRecordSchema);

/** The parent job's payload in COLLECTION_QUEUE. */
export const CollectionPayloadSchema = z.object({
  id: z.string(),
  operation: z.literal('collection'),
  url: z.string(),
  title: z.string().max(500),
  bundle: z.enum(['zip', 'none']),
  archive: z.string().regex(ARCHIVE_NAME_PATTERN).optional(),
  webhook_url: z.string().optional(),
  created_at: z.number().int(),
});
export type CollectionPayload = z.infer<typeof CollectionPayloadSchema>;

/** Redis key of a collection's child records (a JSON array in entry order). */
export const collectionChildrenKey = (prefix: string | undefined, id: string) =>
  `${prefix ?? 'bull'}:${COLLECTION_QUEUE}:children:${id}`;
/**
 * Redis list of a collection's children not yet released (COLLECTION_CONCURRENCY): they wait delayed,
 * and each child's end pops (atomically) and promotes the next one.
 */
export const collectionGateKey = (prefix: string | undefined, id: string) =>
  `${prefix ?? 'bull'}:${COLLECTION_QUEUE}:gate:${id}`;
/** Redis set of an archive's completed entry keys. */
export const archiveKey = (name: string) => `reelay:archive:${name}`;

/** What a collection parent returns when it ends (its BullMQ returnvalue). */
export const CollectionResultSchema = z.object({
  completed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  artifact: z
    .object({
      filename: z.string(),
      content_type: z.string(),
      size: z.number().int().nonnegative(),
      expires_at: z.number().int(),
    })
    .optional(),
});
export type CollectionResult = z.infer<typeof CollectionResultSchema>;

/** One entry of a collection job as GET /api/v1/jobs/{id}/children lists it. */
export const CollectionChildSchema = z
  .object({
    index: z.number().int().min(1).describe('The entry number, from 1'),
    url: z.string().describe("The entry's own URL"),
    title: z.string().optional(),
    status: ChildStatusSchema.describe(
      "The child job's status, or skipped (archive) / failed (nothing downloadable found)",
    ),
    job_id: z.string().optional().describe('The child job: an ordinary job with its own view, events and artifact'),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  })
  .meta({ id: 'CollectionChild' });
export type CollectionChild = z.infer<typeof CollectionChildSchema>;

export const CollectionChildrenEnvelopeSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      children: z.array(CollectionChildSchema),
      next_cursor: z.string().optional().describe('Pass as ?cursor= for the next 100'),
    }),
  })
  .meta({ id: 'CollectionChildrenEnvelope' });

/** Children are listed 100 at a time; the cursor is the offset of the next page. */
export const CHILDREN_PAGE = 100;
export const encodeChildrenCursor = (offset: number) => Buffer.from(`c${offset}`, 'utf8').toString('base64url');
export function decodeChildrenCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const m = /^[A-Za-z0-9_-]{2,12}$/.test(cursor)
    ? /^c(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
    : null;
  if (!m)
    throw new ReelayError(
      'invalid_request',
      'cursor is not valid: pass a next_cursor exactly as the children list returned it.',
    );
  return Number(m[1]);
}

/** A title safe as one ZIP entry name on every system: no separators, controls or reserved characters. */
function safeTitle(title: string): string {
  const cleaned = title
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.]+|[\s.]+$/g, '');
  return [...cleaned].slice(0, 150).join('') || 'entry';
}

/**
 * The names of a bundle's files: `NNN - <title>.<ext>`, NNN the entry's index zero-padded (at least
 * three digits, more when the indexes need them), unique (a repeat gets " (2)"), safe as ZIP paths.
 */
export function bundleEntryNames(entries: { index: number; title?: string; ext: string }[]): string[] {
  const width = Math.max(3, ...entries.map((e) => String(e.index).length));
  const used = new Set<string>();
  return entries.map((e) => {
    const ext = /^[a-z0-9]{1,5}$/i.test(e.ext) ? `.${e.ext.toLowerCase()}` : '';
    const stem = `${String(e.index).padStart(width, '0')} - ${safeTitle(e.title ?? `Entry ${e.index}`)}`;
    let name = `${stem}${ext}`;
    for (let n = 2; used.has(name.toLowerCase()); n++) name = `${stem} (${n})${ext}`;
    used.add(name.toLowerCase());
    return name;
  });
}
