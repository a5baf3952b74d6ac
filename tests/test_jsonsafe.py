"""json_safe: plain JSON data out of job metrics, whatever numeric types went in."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from learnability.jsonsafe import json_safe

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
)
trees = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(trees)
def test_null_mode_is_strict_json_and_keeps_finite_values(tree: object) -> None:
    out = json_safe(tree, "null")
    json.dumps(out, allow_nan=False)  # raises on any NaN / inf left behind

    def same_finite(a: object, b: object) -> bool:
        if isinstance(a, float) and not math.isfinite(a):
            return b is None
        if isinstance(a, dict):
            return isinstance(b, dict) and all(same_finite(v, b[k]) for k, v in a.items())
        if isinstance(a, list):
            return isinstance(b, list) and all(same_finite(x, y) for x, y in zip(a, b, strict=True))
        return a == b and type(a) is type(b)

    assert same_finite(tree, out)


@given(trees)
def test_string_mode_is_strict_json(tree: object) -> None:
    json.dumps(json_safe(tree, "string"), allow_nan=False)


def test_nonfinite_modes() -> None:
    values = [math.nan, math.inf, -math.inf, 1.5]
    assert json_safe(values, "string") == [None, "inf", "-inf", 1.5]
    assert json_safe(values, "null") == [None, None, None, 1.5]
    kept = json_safe(values, "keep")
    assert math.isnan(kept[0]) and kept[1:] == [math.inf, -math.inf, 1.5]


def test_arrays_tensors_and_paths_become_plain() -> None:
    out = json_safe(
        {
            1: np.float32(0.5),
            "a": np.arange(3),
            "t": torch.tensor([[1.0, float("nan")]]),
            "p": Path("x/y"),
        },
        "string",
    )
    assert out == {"1": 0.5, "a": [0, 1, 2], "t": [[1.0, None]], "p": "x/y"}
    assert type(out["a"][0]) is int
    assert json_safe((np.int64(3), np.bool_(True))) == [3, True]
