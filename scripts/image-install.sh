#!/bin/sh
# The production install, shared by the Dockerfile's build stage and scripts/image-smoke.sh (which
# CI runs, having no Docker engine): install the locked dependencies, build, then give each app a
# self-contained folder with only its production dependencies and its workspace packages.
# Usage: scripts/image-install.sh OUT_DIR   (run from the repository root)
# `pnpm prune --prod` is not used: it prompts for a TTY, and with CI=true it removes the apps'
# links to their workspace packages. `pnpm deploy` is the supported way to do this; --legacy
# because the workspace does not set inject-workspace-packages.
set -eu
out=${1:?usage: image-install.sh OUT_DIR}
export CI=true
pnpm install --frozen-lockfile
pnpm build
for app in gateway worker; do
  rm -rf "$out/$app"
  pnpm --filter "@reelay/$app" deploy --prod --legacy "$out/$app"
  # Sources and tests are not needed at run time (dist/ has source maps).
  rm -rf "$out/$app/src" "$out/$app/test" "$out/$app/tsconfig.json"
  # pnpm hoists a link to the app itself that points back into the build tree: dangling at run time.
  rm -f "$out/$app/node_modules/.pnpm/node_modules/@reelay/$app"
done
