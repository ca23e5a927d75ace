# One image for both apps; docker-compose picks the command (gateway/dist/main.js or
# worker/dist/main.js). ffmpeg and ffprobe come from Debian (found on PATH; FFMPEG_PATH overrides).
# yt-dlp comes from PyPI, not Debian, because platforms
# change faster than Debian's release cycle. Node 22 is an LTS line (Node 20 reached end of life).
FROM node:22-bookworm-slim AS build
WORKDIR /src
RUN npm install -g pnpm@10.34.9
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json tsconfig.build.json tsconfig.json .npmrc ./
COPY apps ./apps
COPY packages ./packages
COPY scripts/image-install.sh ./scripts/
# The same install CI checks with scripts/image-smoke.sh: pnpm deploy, one folder per app.
RUN sh scripts/image-install.sh /app

FROM node:22-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg ca-certificates python3 python3-pip \
 && pip3 install --no-cache-dir --break-system-packages yt-dlp \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data FFMPEG_PATH=/usr/bin/ffmpeg FFPROBE_PATH=/usr/bin/ffprobe
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080 9464
# The gateway by default; the worker's healthcheck is set in docker-compose.yml (its port differs).
HEALTHCHECK --interval=10s --timeout=5s --retries=5 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--enable-source-maps", "gateway/dist/main.js"]
