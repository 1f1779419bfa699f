"""Each run starts from the same state: its own copy of the user's namespace.

``copy_namespace`` deep-copies the user's variables (one memo for all of them, so two
names for one object stay one object in the copy); a value that cannot be deep-copied is
shallow-copied, and one that cannot be copied at all is shared. Modules, functions,
classes and other callables are always shared (code, not state), and so are the names
the caller says are not the user's (the kernel's own: ``In``, ``Out``, ``get_ipython`` …)
and names that begin with ``_`` (IPython's output history: ``_``, ``_5``, ``_i5``).

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


def copy_namespace(user_ns: Mapping[str, Any], kernel_names: Iterable[str] = ()) -> NamespaceCopy:
    """A copy of ``user_ns`` for one run (see the module docstring for what is shared)."""
    kernel = set(kernel_names)
    memo: dict[int, Any] = {}
    out = NamespaceCopy({})
    for name, value in list(user_ns.items()):
        if is_shared(name, value, kernel):
            out.namespace[name] = value
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
