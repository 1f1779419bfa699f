#!/usr/bin/env bash
# Build the documentation site into build/docs/ (open build/docs/index.html), in strict mode:
# a broken link, a missing reference or a notebook that fails to render fails the build.
# The flag, setting, subcommand and API pages are generated from the code at each build
# (docs/hooks/reference.py); the example notebooks are rendered from their saved outputs.
# Uses .venv when it already has what the build needs (scripts/test.sh or scripts/lab.sh
# made it); otherwise installs the package's dependencies and the `docs` extra there.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
if ! "$VENV/bin/python" -c "import IPython, pydantic, mkdocs, material, mkdocstrings_handlers.python, mkdocs_jupyter" 2>/dev/null; then
  echo "docs: installing the docs extra into $VENV (once)"
  mapfile -t reqs < <("$VENV/bin/python" scripts/extra_requirements.py core; "$VENV/bin/python" scripts/extra_requirements.py docs)
  "$VENV/bin/python" -m pip install -q "${reqs[@]}"
fi
# The package from this tree (not an installed copy); Material's notice about its successor muted.
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" NO_MKDOCS_2_WARNING=1 "$VENV/bin/python" -m mkdocs build --strict --quiet "$@"
echo "docs: built build/docs/ (open build/docs/index.html)"
