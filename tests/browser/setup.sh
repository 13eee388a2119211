#!/usr/bin/env bash
# What the browser suite (tests/browser) needs: the playwright package (pip, into the course's venv), and from Debian
# Chromium and a CJK font (apt-get, when missing and running as root). Never downloads a Playwright browser build
# (`playwright install` is not run: the suite launches Debian's Chromium). It never fails the caller:
# where it cannot install, it says why, and the suite's tests are then skipped with the same reason.
set -uo pipefail
PYTHON=${PYTHON:-python}  # the course's venv (course.sh puts it first on PATH)
if ! "$PYTHON" -c 'import playwright' >/dev/null 2>&1; then
  echo "浏览器测试：安装 playwright（不下载浏览器）/ browser suite: installing playwright (no browser download)"
  "$PYTHON" -m pip install --disable-pip-version-check -q "playwright>=1.40,<2" ||
    echo "浏览器测试：playwright 安装失败，相关测试将被跳过 / browser suite: pip could not install playwright; its tests will be skipped"
fi
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
{ command -v fc-list >/dev/null 2>&1 && fc-list :lang=zh family | grep -q .; } || need+=(fonts-noto-cjk)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "浏览器测试：无法安装 ${need[*]}（需要 root 和 apt-get），相关测试将被跳过" \
       "/ browser suite: cannot install ${need[*]} (needs root and apt-get); its tests will be skipped"
  exit 0
fi
log=$(mktemp)
echo "浏览器测试：安装 ${need[*]} / browser suite: installing ${need[*]} (apt-get)"
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } >"$log" 2>&1; then
  tail -n 20 "$log"
  echo "浏览器测试：apt-get 安装失败，相关测试将被跳过 / browser suite: apt-get failed; its tests will be skipped"
fi
rm -f "$log"
exit 0
