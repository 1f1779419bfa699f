#!/usr/bin/env bash
# Install jupyter-brain with JupyterLab (the `lab` extra: JupyterLab and what the example
# notebooks import) into the virtualenv VENV, creating it with $PYTHON (python3) if missing.
# scripts/lab.sh runs this before opening JupyterLab; scripts/check_newcomer.py runs it into
# a fresh venv and then runs every notebook there, so the two cannot install differently.
#
#   bash scripts/install_lab.sh VENV
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bash scripts/install_lab.sh VENV" >&2; exit 2; }
VENV=$1
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
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
