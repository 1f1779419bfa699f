"""One argument model per tool *definition*, not per tool built.

The notebook's tools are closures made afresh for every ``%%agent`` cell (over the kernel's
namespace, the working directory, the checkpoint store), and ``@tool`` used to build a
pydantic model for each one, every time, and then its JSON schema: about 50 ms a turn for
the built-in tools. The model depends only on the function's definition — its code, its
annotations and defaults, the tool's name and the docstring's argument texts — so a
closure made again from the same ``def`` reuses it, and with it the schema that
``ToolSpec.input_schema`` keeps per model. A changed definition (a cell that redefines a
``@tool`` function) is a new code object, so it gets a new model.

Only plain functions are shared: a bound method (no ``self`` in its signature), a
``functools.wraps`` wrapper (its signature is the wrapped function's) or a callable object
gets its model built each time, as before.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from pydantic import BaseModel

MAX_MODELS = 512  # definitions remembered (a kernel redefining a tool in a loop stays bounded)

_models: OrderedDict[Hashable, type[BaseModel]] = OrderedDict()
_lock = threading.Lock()


def definition_key(fn: Callable[..., Any], name: str, param_docs: dict[str, str]) -> Hashable | None:
    """What the argument model of ``fn`` as tool ``name`` depends on; None when it cannot be
    told safely (not a plain function, or a default that cannot be hashed)."""
    if not inspect.isfunction(fn) or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        return None
    kwdefaults = fn.__kwdefaults__ or {}
    key = (
        fn.__code__,
        id(fn.__globals__),  # string annotations are evaluated in the function's module
        name,
        tuple(sorted(param_docs.items())),
        tuple((type(d), d) for d in fn.__defaults__ or ()),  # 1 and True are equal, not the same default
        tuple(sorted((k, type(v), v) for k, v in kwdefaults.items())),
        tuple(fn.__annotations__.items()),
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def shared_args_model(fn: Callable[..., Any], name: str, param_docs: dict[str, str],
                      build: Callable[[], type[BaseModel]]) -> type[BaseModel]:
    """The argument model of this definition: built by ``build`` the first time, then reused."""
    key = definition_key(fn, name, param_docs)
    if key is None:
        return build()
    with _lock:
        model = _models.get(key)
        if model is not None:
            _models.move_to_end(key)
            return model
    model = build()  # outside the lock: two threads may both build; either model is right
    with _lock:
        _models[key] = model
        while len(_models) > MAX_MODELS:
            _models.popitem(last=False)
    return model


def clear() -> None:
    """Forget every model (tests)."""
    with _lock:
        _models.clear()
