#!/usr/bin/env bash
# Runs every benchmark of `pnpm bench` once, small and short, and checks that each printed its
# figures and verdicts. The figures of such a run mean nothing; the point is that a benchmark which
# no longer runs (bench/surface-a.mjs crashed for a while after the account routes changed their
# envelope) fails CI instead of waiting for the next performance round. Needs a build (`pnpm build`).
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! BENCH_SECONDS=1 BENCH_ROUNDS=1 BENCH_DOWNLOAD_ROUNDS=1 BENCH_DOWNLOAD_MIB=16 BENCH_JOB_ROUNDS=1 \
  BENCH_QUEUE_BURST=6 BENCH_QUEUE_JOBS=2 BENCH_EVENTS_STREAMS=20 BENCH_EVENTS_ROUNDS=1 BENCH_SHORT_ROUNDS=1 BENCH_SHORT_SECONDS=5 \
  BENCH_CLIP_SECONDS=8 BENCH_CLIP_RANGES=2.5-5 BENCH_ORIGIN_ROUNDS=1 BENCH_COLLECTION_ROUNDS=1 BENCH_COLLECTION_FILES=3 BENCH_COLLECTION_SECONDS=20 BENCH_HLS_SEGMENTS=5 BENCH_PAIR_SECONDS=5 BENCH_WEB_ROUNDS=1 BENCH_SMART_SECONDS=8 BENCH_SMART_CLIP=1.5-6.5 BENCH_SMART_ROUNDS=1 BENCH_SMART_SIZE=320x180 BENCH_RECORD_SECONDS=6 BENCH_RECORD_IDLE_MS=1000 \
  BENCH_REDIS_OPS=2 BENCH_REDIS_JOBS=1 BENCH_REDIS_IDLE_SECONDS=2 BENCH_REDIS_STREAMS=2 BENCH_REDIS_LOAD_SECONDS=1 BENCH_REDIS_BURST=2 BENCH_REDIS_BENCHMARK_REQUESTS=2000 BENCH_LOG_LEVEL=warn node bench/run.mjs >"$log" 2>&1; then
  cat "$log"
  echo "bench-smoke: pnpm bench failed"
  exit 1
fi
for expect in '## extract' 'gateway RSS max' '## surface A gate' 'target: added cost' '## direct download' \
  'ratio gateway/bare Node pipe' '## jobs' 'ratio job/bare ffmpeg' 'floor: ' \
  '## short merge' 'ratio short merge job/bare ffmpeg' '## clip accuracy' 'clips keep their mode' '## smart cut' 'ratio smart cut job / hand re-encode' '## jobs against a realistic origin' 'HLS job/yt-dlp' \
  'pair job/aria2' '## collection download' 'ratio collection/yt-dlp' '## queue' 'scaling 1 → 2 workers' \
  'scale: completed' '## job event streams' 'terminal event at the client' '## web app first load' 'time to interactive' \
  '## Redis cost per operation' 'one core of Redis holds about' 'MEMORY USAGE bytes' \
  '## live recording' 'ratio worker/ffmpeg'; do
  if ! grep -qF -- "$expect" "$log"; then
    cat "$log"
    echo "bench-smoke: the output has no '$expect'"
    exit 1
  fi
done
echo "bench-smoke: every benchmark ran and printed its verdicts ($(grep -cE 'met' "$log") lines)"
