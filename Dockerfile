# One image for both apps; docker-compose picks the command. ffmpeg comes from Debian because
# ffmpeg-static's download step is skipped at install time (see pnpm-workspace.yaml). yt-dlp comes
# from PyPI, not Debian, because platforms change faster than Debian's release cycle.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN npm install -g pnpm@10.34.9
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json tsconfig.build.json tsconfig.json .npmrc ./
COPY apps ./apps
COPY packages ./packages
RUN pnpm install --frozen-lockfile && pnpm build && pnpm prune --prod --config.ignore-scripts=true

FROM node:20-bookworm-slim
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
CMD ["node", "--enable-source-maps", "apps/gateway/dist/main.js"]
