#!/usr/bin/env bash
# Install jupyter-brain with JupyterLab into .venv and open the example notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}

bash scripts/install_lab.sh "$VENV"
exec "$VENV/bin/jupyter" lab --notebook-dir=notebooks "$@"
