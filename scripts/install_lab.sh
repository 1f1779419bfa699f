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
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build)
"$VENV/bin/python" -m pip install -q -e ".[lab]"
