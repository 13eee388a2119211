#!/usr/bin/env bash
# PostgreSQL for the gradebook tests (tests/test_postgres_gradebook.py start a server of their own with initdb and
# pg_ctl in a temporary folder): Debian's `postgresql`, installed with apt-get where it is missing and this runs as
# root, without the default cluster (nothing is started). Never fails the caller: where it cannot install, it says
# why and those tests are skipped with the reason.
set -uo pipefail
command -v initdb >/dev/null 2>&1 && exit 0
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "成绩簿测试：找不到 PostgreSQL，且无法安装（需要 root 和 apt-get）；相关测试将跳过" \
       "/ gradebook tests: PostgreSQL not found and cannot be installed here (needs root and apt-get); they are skipped"
  exit 0
fi
echo "成绩簿测试：安装 PostgreSQL / gradebook tests: installing PostgreSQL (apt-get)"
log=$(mktemp)
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq postgresql-common \
       && sed -i 's/^#* *create_main_cluster.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf \
       && apt-get install -y -qq postgresql; } >"$log" 2>&1; then
  tail -n 20 "$log"
  echo "成绩簿测试：apt-get 安装 postgresql 失败 / gradebook tests: apt-get could not install postgresql"
fi
rm -f "$log"
exit 0
