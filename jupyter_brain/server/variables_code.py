"""The code an outside agent's variable tools run in the notebook's kernel.

It calls the in-kernel agent's own ``list_variables`` / ``inspect_variable``
(``tools/variables``: the same summaries the in-kernel agent reads); a kernel that cannot
import jupyter_brain gets a plain listing. Arguments go in as JSON literals, never as code.
"""

from __future__ import annotations

import json

_TEMPLATE = '''
def __jupyter_brain_variables(tool, arguments):
    namespace = get_ipython().user_ns
    try:
        from jupyter_brain.tools.variables import variable_tools
    except ImportError:
        if tool != "list_variables":
            print("inspect_variable needs jupyter-brain installed in the kernel's environment")
            return
        names = [n for n in namespace if not n.startswith("_") and n not in ("In", "Out", "exit", "quit", "get_ipython")]
        for name in sorted(names):
            print(f"{name}  {type(namespace[name]).__name__}")
        return
    spec = {t.name: t for t in variable_tools(namespace)}[tool]
    try:
        print(spec.fn(**arguments))
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}")
__jupyter_brain_variables(%s, %s)
del __jupyter_brain_variables
'''


def variables_code(tool: str, arguments: dict[str, object]) -> str:
    return _TEMPLATE % (json.dumps(tool), f"__import__('json').loads({json.dumps(json.dumps(arguments))})")
