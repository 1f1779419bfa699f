#!/usr/bin/env bash
# Install jupyter-brain with JupyterLab (the `lab` extra: JupyterLab and what the example
# notebooks import) into the virtualenv VENV, creating it with $PYTHON (python3) if missing.
# scripts/lab.sh runs this before opening JupyterLab; scripts/check_newcomer.py runs it into
# a fresh venv and then runs every notebook there, so the two cannot install differently.
#
# Needs Python 3.11+ and Node 20+ (npm builds the widgets and the JupyterLab extension).
# The first install takes one to three minutes. It is skipped while nothing it is made from
# has changed (pyproject.toml, js/, these scripts, the venv's Python: scripts/install_stamp.py,
# which keeps a stamp in VENV); Python code needs no reinstall (the install is editable).
#
#   bash scripts/install_lab.sh VENV
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bash scripts/install_lab.sh VENV" >&2; exit 2; }
VENV=$1
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

if [ -x "$VENV/bin/python" ]; then
  if said=$("$VENV/bin/python" scripts/install_stamp.py check "$VENV"); then
    echo "jupyter-brain: $said"
    exit 0
  fi
  why="$said"
  first=" (1-3 minutes)"
else
  why="a new virtualenv"
  first=" (the first install takes 1-3 minutes; later launches skip it)"
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || {
    echo "jupyter-brain needs Python 3.11+; $PYTHON is $("$PYTHON" --version 2>&1 || echo missing). Run with PYTHON=python3.12 (or another 3.11+)." >&2
    exit 1
  }
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ] || ! command -v npm >/dev/null; then
  echo "jupyter-brain needs Node 20+ with npm to build its widgets (found: $(node --version 2>/dev/null || echo no node)); see https://nodejs.org" >&2
  exit 1
fi
echo "jupyter-brain: installing into $VENV: $why$first ..."
SECONDS=0

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" scripts/install_stamp.py begin "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# What building the package takes (pyproject.toml's build-system: JupyterLab among it, which
# the lab extra installs anyway) goes into the venv itself, and the install below builds
# there: an isolated build environment would download and install JupyterLab a second time.
# (`editables`: what hatchling asks for to build an editable install.) No `mapfile`: macOS
# runs scripts with bash 3.2; the requirements have no spaces.
# shellcheck disable=SC2046
"$VENV/bin/python" -m pip install -q $("$VENV/bin/python" scripts/extra_requirements.py build-system) editables
# The package's build hook builds the widgets (js/) and the JupyterLab extension (js/lab)
# with Node; `npm ci` first, so that the hook's `npm install` finds the lockfile's versions.
(cd js && npm ci --no-audit --no-fund --loglevel=error)
# The venv's `jupyter` first on PATH: the extension's build runs `jupyter labextension build`.
PATH="$(cd "$VENV" && pwd)/bin:$PATH" "$VENV/bin/python" -m pip install -q --no-build-isolation -e ".[lab]"
# JupyterLab's defaults in this venv only (scripts/lab_settings.json): no "Would you like to
# get notified about official Jupyter news?" pop-up. A user's own setting still wins.
mkdir -p "$VENV/share/jupyter/lab/settings/overrides.d"
cp scripts/lab_settings.json "$VENV/share/jupyter/lab/settings/overrides.d/jupyter-brain.json"

took=$SECONDS
"$VENV/bin/python" scripts/install_stamp.py done "$VENV" "$took"
echo "jupyter-brain: installed in $took s"
