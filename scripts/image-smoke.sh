#!/usr/bin/env bash
# What `docker build` would do, without a Docker engine: copy the build context the Dockerfile
# copies (minus .dockerignore's entries), run the image's install script in a temp dir, then start
# the gateway and the worker from the result exactly as the image's commands do (cwd = the image's
# /app) against a private redis-server, check their health endpoints, and stop them with SIGTERM.
# CI runs it from .ci/run. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/reelay-image-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
say() { echo "image-smoke: $*" >&2; }
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
wait_ok() { # url, what
  for _ in $(seq 1 150); do
    if node -e "fetch('$1').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"; then return 0; fi
    sleep 0.2
  done
  say "$2 did not answer $1"; return 1
}

say "copying the build context"
mkdir -p "$tmp/src" "$tmp/data"
tar --exclude=node_modules --exclude=dist --exclude='*.tsbuildinfo' -cf - \
  package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json tsconfig.build.json tsconfig.json .npmrc \
  apps packages scripts/image-install.sh | tar -xf - -C "$tmp/src"

say "running the image's install (scripts/image-install.sh)"
(cd "$tmp/src" && sh scripts/image-install.sh "$tmp/app") >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
# The runtime stage gets only /app: the build tree must not be needed, and no link may lead out.
rm -rf "$tmp/src"
outside=$(find "$tmp/app" -type l -exec realpath -m {} + | grep -v "^$tmp/app/" || true)
[ -z "$outside" ] || { say "links leading out of the app tree:"; echo "$outside" | head >&2; exit 1; }

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
pids+=($!)
port=$(free_port)
metrics_port=$(free_port)
export REDIS_URL="redis://127.0.0.1:$redis_port" DATA_DIR="$tmp/data" NODE_ENV=production HOST=127.0.0.1 LOG_LEVEL=warn
cd "$tmp/app"
PORT=$port node --enable-source-maps gateway/dist/main.js &
gateway=$!
pids+=($gateway)
METRICS_PORT=$metrics_port node --enable-source-maps worker/dist/main.js &
worker=$!
pids+=($worker)

wait_ok "http://127.0.0.1:$port/healthz" gateway
wait_ok "http://127.0.0.1:$metrics_port/healthz" worker
# /readyz also needs a healthy worker's heartbeat (503 while there is none).
wait_ok "http://127.0.0.1:$port/readyz" "gateway (Redis and a healthy worker)"
wait_ok "http://127.0.0.1:$port/api/v1/platforms" "gateway's API"
say "both apps answer from the installed image tree"

kill -TERM "$gateway" "$worker"
status=0
wait "$gateway" || status=$?
[ "$status" -eq 0 ] || { say "gateway exited with $status on SIGTERM"; exit 1; }
wait "$worker" || status=$?
[ "$status" -eq 0 ] || { say "worker exited with $status on SIGTERM"; exit 1; }
say "ok: installed like the image, started, healthy, stopped cleanly"
