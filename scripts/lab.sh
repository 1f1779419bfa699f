#!/usr/bin/env bash
# Install jupyter-brain with JupyterLab into .venv (or $VENV) and open the example notebooks:
# start with notebooks/quickstart.ipynb. Needs Python 3.11+ and Node 20+ for the first
# install (1-3 minutes); later launches skip the install while nothing it is made from has
# changed (scripts/install_lab.sh) and JupyterLab opens in seconds.
#
#   bash scripts/lab.sh [JUPYTERLAB ARGUMENTS ...]
#
# Arguments go to `jupyter lab` as they are, e.g. `bash scripts/lab.sh --port 8889 --no-browser`.
# As root (Docker, many cloud machines) it adds --allow-root, which JupyterLab asks for.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
START="starting JupyterLab in notebooks/ (open quickstart.ipynb first)"

if [ -x "$VENV/bin/python" ] && said=$("$VENV/bin/python" scripts/install_stamp.py check "$VENV"); then
  echo "jupyter-brain: $said; $START"
else
  bash scripts/install_lab.sh "$VENV"
  echo "jupyter-brain: $START"
fi

as_root=()
[ "$(id -u)" -ne 0 ] || as_root=(--allow-root)
exec "$VENV/bin/jupyter" lab --notebook-dir=notebooks ${as_root[@]+"${as_root[@]}"} "$@"
