"""Each run's own namespace copy, and the "namespace intact" check."""

from __future__ import annotations

import math
import threading

from jupyter_brain.evals import NamespaceSnapshot, copy_namespace


def test_a_copy_is_independent_and_keeps_aliases():
    data = {"rows": [1, 2]}
    user_ns = {"data": data, "alias": data, "math": math, "f": len, "_5": object(), "In": []}
    run = copy_namespace(user_ns, kernel_names={"In"}).namespace
    run["data"]["rows"].append(3)
    assert data == {"rows": [1, 2]}
    assert run["alias"] is run["data"]  # two names for one object stay one object
    assert run["math"] is math and run["f"] is len and run["_5"] is user_ns["_5"] and run["In"] is user_ns["In"]


def test_what_cannot_be_deep_copied_is_shallow_copied_or_shared():
    lock = threading.Lock()

    class NoCopies:
        def __deepcopy__(self, memo):
            raise TypeError("no")

        def __copy__(self):
            raise TypeError("no")

    holder = [lock]
    odd = NoCopies()
    copied = copy_namespace({"holder": holder, "odd": odd})
    assert copied.shallow == ["holder"] and copied.namespace["holder"] is not holder
    assert copied.shared == ["odd"] and copied.namespace["odd"] is odd


def test_snapshot_names_what_changed():
    user_ns = {"x": [1], "y": 2, "In": [], "_": None}
    before = NamespaceSnapshot.take(user_ns, {"In"})
    assert before.changes(user_ns, {"In"}) == []
    user_ns["x"].append(2)  # mutated in place
    del user_ns["y"]
    user_ns["z"] = 3
    user_ns["In"].append("cell")  # the kernel's own: not the user's
    assert before.changes(user_ns, {"In"}) == ["x (changed)", "y (removed)", "z (added)"]
