"""evals/ serves %%compare and eval sets alike: it imports no IPython, widgets or notebook code."""

from __future__ import annotations

from tests.test_import_rules import PACKAGE, UI, all_modules, imports_of


def test_evals_imports_no_notebook_code():
    modules = all_modules()
    bad = {name: sorted(i for i in imports_of(path, modules) if i.startswith(UI))
           for name, path in modules.items() if name.startswith(f"{PACKAGE.name}.evals")}
    assert bad and not any(bad.values()), bad
