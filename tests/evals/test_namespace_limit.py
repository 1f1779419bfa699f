"""A variable over the copy limit is shared read-only, not copied for every run (#27)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jupyter_brain.evals.namespace import NamespaceSnapshot, big_variables, copy_namespace, value_size

MB = 1024 * 1024


class Huge:
    """Says it holds 2 GB (``sys.getsizeof``) without holding it; records deep copies."""

    copies = 0

    def __sizeof__(self) -> int:
        return 2 * 1024 * MB

    def __deepcopy__(self, memo):
        Huge.copies += 1
        return Huge()


def test_sizes_come_from_nbytes_pandas_and_getsizeof():
    array = np.zeros(MB // 8)  # 1 MB
    assert value_size(array) == MB
    frame = pd.DataFrame({"s": ["x" * 100] * 1000})
    assert value_size(frame) == frame.memory_usage(deep=True).sum()
    strings = frame["s"]  # a Series: its strings counted, not only its pointers (nbytes)
    assert value_size(strings) == strings.memory_usage(deep=True) > strings.nbytes
    assert value_size(Huge()) >= 2 * 1024 * MB  # (plus the GC header getsizeof adds)
    assert value_size([Huge(), 1]) > 2 * 1024 * MB  # inside a container too


def test_big_variables_are_shared_read_only_and_the_rest_copied():
    Huge.copies = 0
    user = {"arr": np.zeros(MB // 8), "big": Huge(), "small": [1, 2], "df": pd.DataFrame({"a": np.arange(200_000)})}
    big = big_variables(user, MB // 2)
    assert sorted(big) == ["arr", "big", "df"]
    copied = copy_namespace(user, share=big)
    assert sorted(copied.big) == ["arr", "big", "df"] and Huge.copies == 0
    assert copied.namespace["big"] is user["big"]
    assert np.shares_memory(copied.namespace["arr"], user["arr"])
    with pytest.raises(ValueError, match="read-only"):
        copied.namespace["arr"][0] = 1.0  # a run cannot write into the user's array
    copied.namespace["df"]["new"] = 1  # a new column on the shallow copy stays the run's
    assert "new" not in user["df"]
    assert copied.namespace["small"] == [1, 2] and copied.namespace["small"] is not user["small"]
    assert big_variables(user, 0) == {}  # 0: always copy


def test_the_intact_check_still_sees_a_change_to_a_shared_variable():
    user = {"rows": [0] * 10}
    snapshot = NamespaceSnapshot.take(user)
    copied = copy_namespace(user, share=["rows"])
    copied.namespace["rows"][0] = 1
    assert snapshot.changes(user) == ["rows (changed)"]
