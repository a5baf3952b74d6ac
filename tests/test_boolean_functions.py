"""The function zoo, truth tables, bit order, specs and table files."""

from __future__ import annotations

import numpy as np
import pytest

from learnability.boolean import (
    BooleanFunction,
    all_inputs,
    first,
    load_table,
    majority,
    make_function,
    mean,
    parity,
    random_function,
    resolve_function,
    sparse_parity,
    threshold,
)
from learnability.errors import UserError


def test_bit_order_is_little_endian():
    x = all_inputs(3)
    assert x.shape == (8, 3) and x.dtype == np.uint8
    assert x[1].tolist() == [1, 0, 0]  # index 1 → x_0 = 1
    assert x[6].tolist() == [0, 1, 1]
    assert first(3, i=2).truth_table().tolist() == [0, 0, 0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("name", ["parity", "majority", "first", "and", "or", "threshold", "mean"])
@pytest.mark.parametrize("n", [1, 4, 7])
def test_table_matches_callable(name, n):
    f = make_function(name, n)
    x = all_inputs(n)
    assert np.allclose(f.fn(x), f.truth_table())


def test_zoo_definitions():
    x = all_inputs(6)
    ones = x.sum(1)
    assert (parity(6).truth_table() == ones % 2).all()
    assert (majority(6).truth_table() == (ones >= 3)).all()  # tie → 1
    assert (threshold(6, t=2).truth_table() == (ones >= 2)).all()
    assert (make_function("and", 6).truth_table() == (ones == 6)).all()
    assert (make_function("or", 6).truth_table() == (ones > 0)).all()
    assert np.allclose(mean(6).truth_table(), ones / 6) and mean(6).real_valued


def test_sparse_parity_support():
    f = sparse_parity(8, support=[1, 5])
    x = all_inputs(8)
    assert (f.truth_table() == x[:, 1] ^ x[:, 5]).all()
    g, h = sparse_parity(12, k=4, seed=3), sparse_parity(12, k=4, seed=3)
    assert g.params["support"] == h.params["support"] and len(g.params["support"]) == 4
    supports = {tuple(sparse_parity(12, k=4, seed=s).params["support"]) for s in range(10)}
    assert len(supports) > 1  # the seed matters
    with pytest.raises(UserError, match="support"):
        sparse_parity(5, support=[0, 7])
    with pytest.raises(UserError, match="k="):
        sparse_parity(5, k=9)


def test_random_function_is_seeded():
    a, b = random_function(10, seed=1), random_function(10, seed=1)
    assert (a.truth_table() == b.truth_table()).all()
    assert not (a.truth_table() == random_function(10, seed=2).truth_table()).all()
    assert 400 < a.truth_table().sum() < 624


def test_resolve_specs(tmp_path):
    assert resolve_function("parity", 5).name == "parity"
    assert resolve_function("PARITY", 5).name == "parity"
    assert resolve_function("sparse_parity:k=3,seed=1", 9).params["k"] == 3
    assert resolve_function("sparse_parity:support=[0,4]", 9).params["support"] == [0, 4]
    assert (
        resolve_function("first:i=2", 4).truth_table().tolist()
        == first(4, 2).truth_table().tolist()
    )
    expr = resolve_function("x0 ^ x1", 2)
    assert expr.truth_table().tolist() == [0, 1, 1, 0]
    text = tmp_path / "f.txt"
    text.write_text("0110\n1001\n")
    f = resolve_function(str(text))
    assert f.n == 3 and f.truth_table().tolist() == [0, 1, 1, 0, 1, 0, 0, 1]
    arr = tmp_path / "g.npy"
    np.save(arr, np.array([1, 0, 0, 1], dtype=np.int64))
    assert load_table(arr, 2).truth_table().tolist() == [1, 0, 0, 1]


@pytest.mark.parametrize(
    ("spec", "n", "match"),
    [
        ("parit", 5, "did you mean 'parity'"),
        ("majority:k=2", 5, "unknown parameter 'k'"),
        ("threshold:t=9", 5, "t must be in"),
        ("first:i=5", 5, "i must be in"),
        ("parity", 0, "n=0"),
        ("parity", -3, "n=-3"),
        ("random", 40, "too large"),
    ],
)
def test_bad_specs(spec, n, match):
    with pytest.raises(UserError, match=match):
        resolve_function(spec, n).truth_table()


def test_bad_table_files(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("0110")
    with pytest.raises(UserError, match="for n=3 it must have 8"):
        load_table(short, 3)
    odd = tmp_path / "odd.txt"
    odd.write_text("011")
    with pytest.raises(UserError, match="power of two"):
        load_table(odd)
    bad = tmp_path / "bad.txt"
    bad.write_text("0120")
    with pytest.raises(UserError, match="'2'"):
        load_table(bad)
    vals = tmp_path / "v.npy"
    np.save(vals, np.array([0, 1, 3, 0]))
    with pytest.raises(UserError, match="0 or 1"):
        load_table(vals)
    with pytest.raises(UserError, match="does not exist"):
        load_table(tmp_path / "missing.npy")


def test_callable_and_bad_callable():
    f = BooleanFunction(4, "x0&x3", fn=lambda x: x[:, 0] & x[:, 3])
    assert f.truth_table().sum() == 4
    g = BooleanFunction(4, "twos", fn=lambda x: 2 * x[:, 0])
    with pytest.raises(UserError, match="0 or 1"):
        g.truth_table()
    h = BooleanFunction(4, "shape", fn=lambda x: x)
    with pytest.raises(UserError, match=r"\(B,\)"):
        h.truth_table()
