"""Expression parsing: semantics against Python on all inputs, precedence, and errors with positions."""

from __future__ import annotations

import numpy as np
import pytest

from learnability.boolean import all_inputs, expression_function
from learnability.boolean.expr import parse
from learnability.errors import UserError


def _check(expr: str, n: int, reference) -> None:
    f = expression_function(expr, n)
    x = all_inputs(n).astype(int)
    want = np.array([int(bool(reference(*row))) for row in x], dtype=np.uint8)
    assert (f.truth_table() == want).all(), expr
    assert (f(x.astype(np.uint8)) == want).all(), expr


@pytest.mark.parametrize(
    ("expr", "ref"),
    [
        ("x0 ^ x3 | maj(x1, x2, x4)", lambda a, b, c, d, e: (a ^ d) | (b + c + e >= 2)),
        ("x0 & x1 ^ x2", lambda a, b, c, d, e: (a & b) ^ c),  # & binds tighter than ^
        ("x0 | x1 ^ x2", lambda a, b, c, d, e: a | (b ^ c)),  # ^ binds tighter than |
        ("not x0 and x1 or x2", lambda a, b, c, d, e: ((not a) and b) or c),
        ("~x0 & ~(x1 | x2)", lambda a, b, c, d, e: (1 - a) & (1 - (b | c))),
        ("parity(x0, x1, x2) ^ xor(x3, x4)", lambda a, b, c, d, e: a ^ b ^ c ^ d ^ e),
        ("and(x0, x1, 1) or or(x3, 0)", lambda a, b, c, d, e: (a and b) or d),
        ("thr(2, x0, x1, x2, x3)", lambda a, b, c, d, e: a + b + c + d >= 2),
        ("maj(x0, x1, x2, x3)", lambda a, b, c, d, e: 2 * (a + b + c + d) >= 4),  # tie → 1
        ("not (x0) ^ x1", lambda a, b, c, d, e: not (a ^ b)),  # Python: not binds loosest
        ("1", lambda *_: 1),
        ("((x4))", lambda a, b, c, d, e: e),
    ],
)
def test_semantics(expr, ref):
    _check(expr, 5, ref)


@pytest.mark.parametrize(
    ("expr", "column"),
    [
        ("x0 ^^ x1", 5),
        ("(x0 | x1", 9),
        ("x0 x1", 4),
        ("maj(x0,,x1)", 8),
        ("x0 $ x1", 4),
        ("", 1),
        ("x0 | 2", 6),
        ("thr(x0, x1)", 5),
        ("foo(x0)", 1),
    ],
)
def test_malformed_reports_column(expr, column):
    with pytest.raises(UserError, match=rf"column {column}\b"):
        parse(expr, 5)


def test_variable_out_of_range():
    with pytest.raises(UserError, match=r"x5 .*outside x0\.\.x4"):
        parse("x0 ^ x5", 5)


def test_no_code_execution():
    for bad in ("__import__('os')", "x0.real", "lambda: 1", "x0; x1"):
        with pytest.raises(UserError):
            parse(bad, 3)
