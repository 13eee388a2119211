#!/usr/bin/env bash
# The hub's proxy: npm's configurable-http-proxy (course/hub/package.json) into course/hub/node_modules, once.
# Where npm is missing it installs Debian's npm (as root with apt-get); fails with a bilingual reason otherwise.
set -uo pipefail
cd "$(dirname "$0")"
[ -x node_modules/.bin/configurable-http-proxy ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "hub：安装 npm / hub: installing npm (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm; } >/dev/null 2>&1
  fi
  command -v npm >/dev/null 2>&1 || {
    echo "hub：找不到 npm（configurable-http-proxy 需要 node 和 npm）：安装 nodejs 和 npm 后重试" \
         "/ hub: no npm (configurable-http-proxy needs node and npm): install nodejs and npm, then try again" >&2
    exit 1; }
fi
echo "hub：用 npm 安装 configurable-http-proxy / hub: installing configurable-http-proxy with npm"
log=$(mktemp)
if ! npm install --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
  tail -n 20 "$log"
  echo "hub：npm install 失败 / hub: npm install failed" >&2
  rm -f "$log"; exit 1
fi
rm -f "$log"
