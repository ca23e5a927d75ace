// How `reelay extract` and `reelay job` print for a person (aligned columns on stdout); --json
// prints the server's data instead, for programs.
import type { ExtractResult, JobView, Source } from './api.js';
import { formatBytes } from './progress.js';

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const tracks = (s: Source) => {
  if (s.stream_profile === 'image') return 'image';
  const video = s.stream_profile !== 'audio_only' && s.has_video !== false;
  const audio = s.stream_profile !== 'video_only' && s.has_audio !== false;
  return video && audio ? 'video+audio' : video ? 'video' : 'audio';
};

/** 1280x720, or 720p when only the height is known. */
const resolution = (s: Source) => (s.width && s.height ? `${s.width}x${s.height}` : s.height ? `${s.height}p` : '');

/** Items and sources are numbered from 1, as `reelay get --items N --source N` takes them. */
export function extractText(result: ExtractResult): string {
  const lines = [`${result.title} (${result.platform}, ${result.content_type})`];
  for (const [i, item] of result.media.entries()) {
    const rows = [['#', 'QUALITY', 'TRACKS', 'PROFILE', 'EXT', 'RESOLUTION', 'BITRATE', 'CODECS']];
    for (const [n, s] of item.sources.entries()) {
      rows.push([
        String(n + 1),
        s.quality,
        tracks(s),
        s.stream_profile,
        s.ext ?? '',
        resolution(s),
        s.bitrate ? `${Math.round(s.bitrate / 1000)}k` : '',
        s.codecs ?? '',
      ]);
    }
    lines.push(
      '',
      `item ${i + 1}: ${item.type}${item.title ? `: ${item.title}` : ''}${item.duration ? ` (${item.duration.toFixed(1)} s)` : ''}`,
      table(rows),
    );
  }
  return `${lines.join('\n')}\n`;
}

export function jobText(job: JobView): string {
  const rows: [string, string | undefined][] = [
    ['id', job.id],
    ['status', job.status],
    ['operation', job.operation],
    ['progress', `${job.progress}%`],
    ['created', job.created_at],
    ['started', job.started_at],
    ['finished', job.finished_at],
    ['error', job.error && `${job.error.message} (${job.error.code})`],
    [
      'file',
      job.artifact && `${job.artifact.filename} (${formatBytes(job.artifact.size)}, ${job.artifact.content_type})`,
    ],
    ['artifact', job.artifact?.url],
    ['expires', job.artifact?.expires_at],
  ];
  return `${table(rows.filter((r): r is [string, string] => r[1] !== undefined).map(([k, v]) => [`${k}:`, v]))}\n`;
}
