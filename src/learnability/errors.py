"""One exception type for bad input from a user.

Every check of user input (CLI arguments, config files, function expressions, model shapes) raises
`UserError` with a one-line message that names the bad value and what is allowed. The CLI turns it into
`error: <message>` and exit code 2, without a traceback; library users can catch it as a `ValueError`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable

__all__ = ["UserError", "check_choice", "check_int", "check_number", "did_you_mean"]


class UserError(ValueError):
    """Bad input: the message names the bad value and what is allowed."""


def did_you_mean(value: str, allowed: Iterable[str]) -> str:
    """A ' (did you mean X?)' suffix naming the closest allowed spelling, or ''."""
    close = difflib.get_close_matches(str(value), list(allowed), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(what: str, value: str, allowed: Iterable[str]) -> str:
    """Return `value` if it is one of `allowed`, else raise a UserError listing them."""
    allowed = list(allowed)
    if value not in allowed:
        raise UserError(
            f"unknown {what} {value!r}{did_you_mean(value, allowed)}; allowed: {', '.join(map(str, allowed))}"
        )
    return value


def _shown(value: object) -> str:
    # repr for text (quotes make blanks and odd characters visible), plain for numbers
    return repr(value) if isinstance(value, str) else str(value)


def check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """Return `value` if it is an int (not a bool) in [low, high], else a UserError naming both."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(
            f"{name}={_shown(value)} is not allowed; it must be an integer{_span(low, high)}"
        )
    if (low is not None and value < low) or (high is not None and value > high):
        raise UserError(f"{name}={value} is not allowed; it must be an integer{_span(low, high)}")
    return value


def check_number(
    name: str,
    value: object,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return `value` if it is a finite number in the interval, else a UserError naming both.

    The interval is [low, high]; `low_open` / `high_open` exclude an end."""

    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        number = float(value)  # type: ignore[arg-type]
        ok = math.isfinite(number)
        if ok and low is not None:
            ok = number > low if low_open else number >= low
        if ok and high is not None:
            ok = number < high if high_open else number <= high
    if not ok:
        if low is not None and high is not None:
            where = f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        elif low is not None:
            where = f" {'>' if low_open else '≥'} {low:g}"
        elif high is not None:
            where = f" {'<' if high_open else '≤'} {high:g}"
        else:
            where = ""
        raise UserError(f"{name}={_shown(value)} is not allowed; it must be a finite number{where}")
    return float(value)  # type: ignore[arg-type]


def _span(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" in {low}..{high}"
    if low is not None:
        return f" ≥ {low}"
    if high is not None:
        return f" ≤ {high}"
    return ""
