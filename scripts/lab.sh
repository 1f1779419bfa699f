#!/usr/bin/env bash
# Install jupyter-brain with JupyterLab into .venv and open the example notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build)
"$VENV/bin/python" -m pip install -q -e ".[lab]"
exec "$VENV/bin/jupyter" lab --notebook-dir=notebooks "$@"
