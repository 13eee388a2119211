#!/usr/bin/env bash
# One entry point for everything: sets up .venv (idempotent), then runs the job.
#   bash course.sh demo        set up, release the notebooks and grade the sample class
#   bash course.sh test        set up, lint and run the test suite (what CI runs)
#   bash course.sh bundle [DEST]  write the student bundle (release notebooks + utils, no answers) and its zip
#   bash course.sh hub [--port 8000]  as root: a JupyterHub for the roster's students (course/hub; guide 8.8)
#   bash course.sh lab         set up, open the student notebooks (release/) in JupyterLab
#   bash course.sh check|release|grade|selftest|bench ...   any `python -m course` sub-command
# grade, regrade, demo and hub install bubblewrap where missing (course/install_sandbox.sh); where it cannot be had,
# grading refuses unless told --allow-weaker-sandbox (or FLASH_COURSE_ALLOW_WEAKER_SANDBOX=1).
# Environment: PYTHON (interpreter, >= 3.11), COURSE_VENV (default .venv),
#              TORCH_SPEC (pip requirement for torch when none is installed).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
VENV=${COURSE_VENV:-.venv}
say() { printf '%s\n' "$*"; }

setup() {  # $1: the extras, "dev", "dev,hub" or "dev,cluster,hub" (Ray, psycopg, JupyterHub: for the tests, a cluster, the hub)
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    say "需要 Python >= 3.11（nbgrader 0.9.6 的要求）/ Python >= 3.11 is required (nbgrader 0.9.6)"; exit 1; }
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  local py="$VENV/bin/python" log="$VENV/install.log" hash
  hash=$(cat pyproject.toml course.sh | sha1sum | cut -c1-12)
  local stamp="$VENV/.installed-$1-$hash"
  [ -e "$stamp" ] && return 0
  [ -e "$VENV/.installed-dev,cluster,hub-$hash" ] && return 0   # the tests' install holds every other
  say "安装依赖到 $VENV（首次约需几分钟）/ installing dependencies into $VENV (a few minutes the first time)"
  : >"$log"
  pip() { "$py" -m pip install --disable-pip-version-check "$@" >>"$log" 2>&1 || {
    tail -n 30 "$log"; say "安装失败，完整日志见 $log / install failed, full log in $log"; exit 1; }; }
  if ! "$py" -c 'import torch' 2>/dev/null; then
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
      pip "${TORCH_SPEC:-torch>=2.5,<3}"            # CUDA wheel, brings its own triton
    elif "$py" -c 'import socket; socket.getaddrinfo("download.pytorch.org", 443)' 2>/dev/null; then
      pip "${TORCH_SPEC:-torch>=2.5,<3}" --index-url https://download.pytorch.org/whl/cpu
    else
      pip "${TORCH_SPEC:-torch==2.13.0}"             # CPU build where a local wheel is provided
    fi
  fi
  if ! "$py" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
    pip "triton>=3.7,<4"   # CPU interpreter: Triton 3.6 breaks with NumPy >= 2.4
  fi
  pip -e ".[$1]"
  rm -f "$VENV"/.installed-*; touch "$stamp"
}

case "${1:-demo}" in test) setup dev,cluster,hub ;; hub) setup dev,hub ;; *) setup dev ;; esac
export PATH="$PWD/$VENV/bin:$PATH"
case "${1:-demo}" in
  test)
    shift
    python -m ruff check .
    python -m ruff format --check .
    bash tests/browser/setup.sh   # Chromium and a CJK font from apt where missing; says why where it cannot
    bash course/install_sandbox.sh   # bubblewrap from apt where missing: the sandbox tests need the allow-list
    bash tests/install_postgres.sh   # PostgreSQL from apt where missing: the gradebook tests start their own server
    bash course/hub/install_proxy.sh || echo "hub 测试将被跳过 / the hub tests will be skipped"
    exec python -m pytest "$@" ;;
  hub)
    shift
    bash course/install_sandbox.sh   # the hub's host grades too: bubblewrap, or grading refuses (see below)
    bash course/hub/install_proxy.sh
    exec python -m course.hub "$@" ;;
  lab)
    shift
    exec jupyter lab release "$@" ;;
  *)
    # a command that grades (after --course-dir too): bubblewrap where missing; where it cannot be had, grading
    # refuses the weaker fallback unless told --allow-weaker-sandbox
    for word in "${@:-demo}"; do
      case $word in grade|regrade|demo) bash course/install_sandbox.sh; break ;; esac
    done
    exec python -m course "$@" ;;
esac
