"""Print the requirements of one optional-dependency group of pyproject.toml, one a line.

For the scripts that install a group's packages without installing jupyter-brain itself
(scripts/local_model.sh, the background build of scripts/test.sh), so the versions are
written once, in pyproject.toml. ``build-system`` prints what building the package needs
(scripts/test.sh installs it, then builds without an isolated build environment), ``core``
the package's own dependencies (scripts/docs.sh imports it from the source tree).

    python scripts/extra_requirements.py local-model
    python scripts/extra_requirements.py build-system
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def main() -> None:
    pyproject = tomllib.loads(PYPROJECT.read_text())
    extras = {**pyproject["project"]["optional-dependencies"], "build-system": pyproject["build-system"]["requires"],
              "core": pyproject["project"]["dependencies"]}
    if len(sys.argv) != 2 or sys.argv[1] not in extras:
        sys.exit(f"usage: python {sys.argv[0]} {{{','.join(extras)}}}")
    print("\n".join(extras[sys.argv[1]]))


if __name__ == "__main__":
    main()
