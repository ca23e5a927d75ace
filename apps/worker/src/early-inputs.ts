// A merge's two files are opened by the job's proxy as ffmpeg is spawned (the shared proxy's
// openEarly, proxy-early.ts), not when ffmpeg asks: ffmpeg asks for the video once its process has
// started (~110 ms) and for the audio once it has read the video's header, and against a distant
// origin each wait is a round trip plus the pace probe before the Range parts go out (~115 ms of a
// 2.9 s merge on the realistic bench origin). Only a merge without a clip: its ffmpeg reads both files from the first
// byte. The headers are those ffmpeg sends for the input, so its request finds the answer waiting.
import type http from 'node:http';
import type { JobPayload } from '@reelay/contracts';
import type { MediaInput } from '@reelay/media';
import type { JobPlan } from './plan.js';
import type { JobProxy } from './proxy.js';
import type { JobProxySession } from './proxy-session.js';

/** What ffmpeg's http protocol sends on its first request for a file, beside the input's own headers. */
const FFMPEG_HEADERS: http.IncomingHttpHeaders = { range: 'bytes=0-', accept: '*/*', 'icy-metadata': '1' };

/** The inputs a job's ffmpeg reads from their first byte, opened early; how many were opened. */
export function openInputsEarly(proxy: Partial<Pick<JobProxy, 'openEarly'>>, session: JobProxySession, payload: JobPayload, plan: JobPlan): number {
  const op = plan.operation;
  if (!proxy.openEarly || op.type !== 'merge' || payload.clip) return 0;
  let opened = 0;
  for (const input of [op.videoInput, op.audioInput]) {
    const { url, headers } = spec(input);
    const lowered = Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    if (proxy.openEarly(session, url, { ...FFMPEG_HEADERS, ...lowered })) opened += 1;
  }
  return opened;
}

function spec(input: MediaInput): { url: string; headers?: Record<string, string> } {
  return typeof input === 'string' ? { url: input } : input;
}
