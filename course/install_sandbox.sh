#!/usr/bin/env bash
# The grading sandbox's tool: bubblewrap (`bwrap`, Debian/Ubuntu package `bubblewrap`), installed with apt-get where
# it is missing and this runs as root. On an offline GPU host, carry the .deb (`apt-get download bubblewrap`) and
# install it with `dpkg -i`. Never fails the caller: where it cannot install, it says why; grading then refuses
# unless the instructor names the weaker `unshare` fallback (`--allow-weaker-sandbox`) or `--no-sandbox`.
set -uo pipefail
command -v bwrap >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "评分沙箱：找不到 bwrap，且无法安装（需要 root 和 apt-get）；请安装 bubblewrap" \
       "/ grading sandbox: bwrap not found and cannot be installed here (needs root and apt-get); install bubblewrap"
  exit 0
fi
echo "评分沙箱：安装 bubblewrap / grading sandbox: installing bubblewrap (apt-get)"
log=$(mktemp)
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; } >"$log" 2>&1; then
  tail -n 20 "$log"
  echo "评分沙箱：apt-get 安装 bubblewrap 失败 / grading sandbox: apt-get could not install bubblewrap"
fi
rm -f "$log"
exit 0
