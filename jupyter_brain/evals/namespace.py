"""Each run starts from the same state: its own copy of the user's namespace.

``copy_namespace`` deep-copies the user's variables (one memo for all of them, so two
names for one object stay one object in the copy); a value that cannot be deep-copied is
shallow-copied, and one that cannot be copied at all is shared. Modules, functions,
classes and other callables are always shared (code, not state), and so are the names
the caller says are not the user's (the kernel's own: ``In``, ``Out``, ``get_ipython`` …)
and names that begin with ``_`` (IPython's output history: ``_``, ``_5``, ``_i5``).

Copying costs memory once per run (a 2 GB DataFrame and 8 runs: 16 GB), so a variable
bigger than a limit (``AgentMagics.compare_copy_limit_mb``; ``big_variables`` measures:
numpy's ``nbytes``, pandas' ``memory_usage(deep=True)``, else ``sys.getsizeof`` over a
container's items) is shared instead, read-only where the library allows it without a
copy: a numpy array as a read-only view, a pandas object as a shallow copy (with pandas'
copy-on-write a run's change copies the data; without it, an in-place change of values
reaches the user's). ``share`` names them; the caller warns naming each.

A shared or shallow-copied value can still be changed in place by a run. DSEval's
"namespace intact" check catches that: ``NamespaceSnapshot`` fingerprints the user's
variables before the runs (pickled bytes, hashed), and ``changes`` names those added,
removed or changed afterwards. A value that cannot be pickled is compared by its parts
(items, attributes), and at the bottom by identity.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import pickle
import sys
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


def is_shared(name: str, value: Any, kernel_names: Iterable[str] = ()) -> bool:
    """Shared as-is by every run: code, IPython's history and the kernel's own names."""
    if name.startswith("_") or name in set(kernel_names):
        return True
    return isinstance(value, types.ModuleType) or inspect.isclass(value) or callable(value)


@dataclass
class NamespaceCopy:
    """One run's namespace and what could not be deep-copied (``shallow``, ``shared``)."""

    namespace: dict[str, Any]
    shallow: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)
    big: list[str] = field(default_factory=list)  # shared (read-only where possible): over the size limit


SIZE_DEPTH = 3  # how deep into containers ``value_size`` looks


def value_size(value: Any, limit: int | None = None, depth: int = 0) -> int:
    """About how many bytes ``value`` holds: an array's ``nbytes``, a pandas object's deep
    memory use, else ``sys.getsizeof`` plus (a few levels into) a container's items.
    Stops adding once past ``limit``: only whether it is over matters."""
    usage = getattr(value, "memory_usage", None)
    if callable(usage) and type(value).__module__.startswith("pandas"):  # before nbytes: a Series has both
        try:
            measured = usage(deep=True)
            return int(measured.sum() if hasattr(measured, "sum") else measured)
        except Exception:  # noqa: BLE001 - a pandas object that cannot say: by its shell
            pass
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int) and not isinstance(value, type):
        return nbytes
    try:
        size = sys.getsizeof(value)
    except Exception:  # noqa: BLE001 - an object whose __sizeof__ fails
        return 0
    if depth >= SIZE_DEPTH or not isinstance(value, (list, tuple, set, frozenset, dict)):
        return size
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
    for item in items:
        if limit is not None and size > limit:
            break
        size += value_size(item, limit, depth + 1)
    return size


def big_variables(user_ns: Mapping[str, Any], limit_bytes: int, kernel_names: Iterable[str] = ()) -> dict[str, int]:
    """The user's variables bigger than ``limit_bytes`` (name → bytes); none when the limit is 0."""
    if limit_bytes <= 0:
        return {}
    kernel = set(kernel_names)
    sizes = {name: value_size(value, limit_bytes) for name, value in list(user_ns.items())
             if not is_shared(name, value, kernel)}
    return {name: size for name, size in sizes.items() if size > limit_bytes}


def read_only(value: Any) -> Any:
    """``value`` without a copy of its data, protected where its library allows: a numpy
    array as a read-only view, a pandas object as a shallow copy; anything else as is."""
    module = type(value).__module__
    try:
        if module.startswith("numpy") and hasattr(value, "view") and hasattr(value, "flags"):
            view = value.view()
            view.flags.writeable = False
            return view
        if module.startswith("pandas") and hasattr(value, "copy"):
            return value.copy(deep=False)
    except Exception:  # noqa: BLE001 - not as expected: share it as it is
        pass
    return value


def copy_namespace(user_ns: Mapping[str, Any], kernel_names: Iterable[str] = (),
                   share: Iterable[str] = ()) -> NamespaceCopy:
    """A copy of ``user_ns`` for one run (see the module docstring for what is shared);
    ``share``: the variables not copied (``big_variables``), handed over ``read_only``."""
    kernel = set(kernel_names)
    not_copied = set(share)
    memo: dict[int, Any] = {}
    out = NamespaceCopy({})
    for name, value in list(user_ns.items()):
        if is_shared(name, value, kernel):
            out.namespace[name] = value
            continue
        if name in not_copied:
            out.namespace[name] = read_only(value)
            out.big.append(name)
            continue
        try:
            out.namespace[name] = copy.deepcopy(value, memo)
        except Exception:  # noqa: BLE001 - locks, sockets, generators: try a shallow copy
            try:
                out.namespace[name] = copy.copy(value)
                out.shallow.append(name)
            except Exception:  # noqa: BLE001 - cannot be copied at all: shared
                out.namespace[name] = value
                out.shared.append(name)
    return out


class _HashWriter:
    """A file for ``pickle`` that feeds what it is given to a hash."""

    def __init__(self, digest: Any) -> None:
        self.digest = digest

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return len(data)


def _fingerprint(value: Any, depth: int = 0) -> str:
    """Pickled bytes, hashed; what cannot be pickled by its parts (a container's items, an
    object's attributes), and at the bottom by identity."""
    digest = hashlib.sha256()
    try:  # streamed into the hash: a big DataFrame is never held twice as bytes
        pickle.Pickler(_HashWriter(digest), protocol=pickle.HIGHEST_PROTOCOL).dump(value)
        return digest.hexdigest()
    except Exception:  # noqa: BLE001 - unpicklable: look inside, then at identity
        pass
    if depth < 3:
        parts: list[Any] | None = None
        if isinstance(value, dict):
            parts = [(repr(k), _fingerprint(v, depth + 1)) for k, v in list(value.items())]
        elif isinstance(value, (list, tuple)):
            parts = [_fingerprint(v, depth + 1) for v in value]
        elif hasattr(value, "__dict__"):
            parts = [(k, _fingerprint(v, depth + 1)) for k, v in list(vars(value).items())]
        if parts is not None:
            return hashlib.sha256(repr((type(value).__name__, id(value), parts)).encode()).hexdigest()
    return f"id:{id(value)}"


@dataclass(frozen=True)
class NamespaceSnapshot:
    """The user's variables (not code, not the kernel's names) as fingerprints."""

    prints: dict[str, str]

    @classmethod
    def take(cls, user_ns: Mapping[str, Any], kernel_names: Iterable[str] = ()) -> NamespaceSnapshot:
        kernel = set(kernel_names)
        return cls({name: _fingerprint(value) for name, value in list(user_ns.items())
                    if not is_shared(name, value, kernel)})

    def changes(self, user_ns: Mapping[str, Any], kernel_names: Iterable[str] = ()) -> list[str]:
        """What differs now: ``"x (added)"``, ``"df (changed)"``, ``"y (removed)"``; [] when intact."""
        now = NamespaceSnapshot.take(user_ns, kernel_names).prints
        changed = [f"{n} (changed)" for n, fp in self.prints.items() if n in now and now[n] != fp]
        removed = [f"{n} (removed)" for n in self.prints if n not in now]
        added = [f"{n} (added)" for n in now if n not in self.prints]
        return changed + removed + added
