"""Tools that let the model see the user's variables without running code.

``list_variables`` gives a one-line summary per variable; ``inspect_variable`` a
detailed view of one, reached by a dotted / indexed path such as ``df.columns`` or
``data['key']``. Paths are parsed, never evaluated: only names, attribute lookups and
item lookups with literal keys are followed, and dunder attributes are refused.

pandas and numpy are recognised by class name and module, so this package never imports
them: a user who has not imported pandas does not pay for it here.

The parts, one job each:

- ``tool_specs``: the two tools as the model sees them;
- ``names``: which names in the namespace are the user's;
- ``kinds``: what kind of value something is (DataFrame, array, callable, ...);
- ``summary``: the one-line summary of any value;
- ``access_path``: parsing and following ``name.attr['key']`` paths;
- ``describe``: the detailed view of each kind of value.
"""

from __future__ import annotations

from .access_path import parse_access_path, resolve_access_path
from .describe import DESCRIBE_COLUMNS, MAX_COLUMNS, MAX_KEYS, REPR_CHARS, describe
from .kinds import is_callable_definition, type_name
from .names import IPYTHON_NAMES, user_variable_names
from .summary import SUMMARY_CHARS, summarize
from .tool_specs import MAX_LISTED, variable_tools

# the names these had when everything lived in one module (workspace_context uses them)
_is_callable_definition = is_callable_definition
_type_name = type_name

__all__ = [
    "DESCRIBE_COLUMNS",
    "IPYTHON_NAMES",
    "MAX_COLUMNS",
    "MAX_KEYS",
    "MAX_LISTED",
    "REPR_CHARS",
    "SUMMARY_CHARS",
    "describe",
    "parse_access_path",
    "resolve_access_path",
    "summarize",
    "user_variable_names",
    "variable_tools",
]
