#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run all tests: the
# widgets' vitest suite, the JupyterLab extension's vitest suite and build, the wheel
# installed into a fresh venv, ruff and mypy (rules in pyproject.toml), Python
# unit/integration tests, the example notebooks under nbval, and the real-browser checks
# (JupyterLab + headless Debian Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

# Debian's Chromium for the browser test (never a downloaded browser build).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# A C++ compiler: llama-cpp-python (the real model of tests/local_model) builds llama.cpp
# on its first install, about 15 minutes on 2 cores; pip caches the wheel for later runs.
if ! command -v g++ >/dev/null; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++ >/dev/null
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# Front-end first: the Python package ships the built bundle.
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build && npm test)
"$VENV/bin/python" -c "import llama_cpp" 2>/dev/null ||
  echo "Installing llama-cpp-python: the first build of llama.cpp takes about 15 minutes on 2 cores..."
"$VENV/bin/python" -m pip install -q -e ".[test]"
# The JupyterLab extension (js/lab, its own node_modules): vitest, a fresh build (`jupyter
# labextension build` comes from the venv's jupyterlab), then the wheel as users get it:
# built, installed into a fresh venv (build/wheel-check), `jupyter labextension list` checked
# there and beside the oldest JupyterLab the `lab` extra allows.
# The browser tests run that venv's JupyterLab (JUPYTER_BRAIN_LAB_PYTHON).
VENV_BIN="$(cd "$VENV" && pwd)/bin"
(cd js/lab && npm ci --no-audit --no-fund --loglevel=error && npm test && PATH="$VENV_BIN:$PATH" npm run build)
"$VENV/bin/python" scripts/check_wheel.py
export JUPYTER_BRAIN_LAB_PYTHON="$PWD/build/wheel-check/venv/bin/python"

export PYTHONUNBUFFERED=1
# Tests never reach a hosted model (tests/local_model starts its own on 127.0.0.1): the
# notebooks would switch to one if a key were set.
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL JUPYTER_BRAIN_BASE_URL
# Lint and type-check before the tests: any finding fails the run.
"$VENV/bin/ruff" check jupyter_brain benchmarks scripts
"$VENV/bin/mypy"  # the paths are in pyproject.toml: jupyter_brain/agent and jupyter_brain/providers
"$VENV/bin/python" -m pytest tests notebooks --nbval -p no:cacheprovider "$@"
