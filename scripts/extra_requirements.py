"""Print the requirements of one optional-dependency group of pyproject.toml, one a line.

For the scripts that install a group's packages without installing jupyter-brain itself
(scripts/local_model.sh, the background build of scripts/test.sh), so the versions are
written once, in pyproject.toml.

    python scripts/extra_requirements.py local-model
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def main() -> None:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    if len(sys.argv) != 2 or sys.argv[1] not in extras:
        sys.exit(f"usage: python {sys.argv[0]} {{{','.join(extras)}}}")
    print("\n".join(extras[sys.argv[1]]))


if __name__ == "__main__":
    main()
