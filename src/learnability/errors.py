"""One exception type for bad input from a user.

Every check of user input (CLI arguments, config files, function expressions, model shapes) raises
`UserError` with a one-line message that names the bad value and what is allowed. The CLI turns it into
`error: <message>` and exit code 2, without a traceback; library users can catch it as a `ValueError`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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
