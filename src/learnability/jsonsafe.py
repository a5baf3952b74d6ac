"""One way to turn job metrics, claim results and log rows into plain JSON data.

Jobs return numpy scalars, tensors, paths and non-finite floats; the store, metrics logs and the report
each want plain JSON. `json_safe` recurses once through dicts, lists and tuples, turns anything with
`tolist()` (numpy arrays and scalars, tensors) into numbers or lists, paths and unknown objects into
strings, and treats non-finite floats as the caller asks:

- `"keep"`: leave NaN and ±inf as floats (Python's json writes them; the store reads them back),
- `"string"`: NaN → None, ±inf → "inf" / "-inf" (a job's metrics: infinity is a result worth keeping),
- `"null"`: every non-finite float → None (strict JSON for claims.json).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

NonFinite = Literal["keep", "string", "null"]


def json_safe(value: Any, nonfinite: NonFinite = "keep") -> Any:
    """A copy of `value` made of dict / list / str / int / float / bool / None only."""
    if isinstance(value, dict):
        return {str(k): json_safe(v, nonfinite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, nonfinite) for v in value]
    if isinstance(value, float):
        if math.isfinite(value) or nonfinite == "keep":
            return value
        if nonfinite == "null" or math.isnan(value):
            return None
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):  # numpy scalars and arrays, tensors
        return json_safe(value.tolist(), nonfinite)
    if hasattr(value, "item"):
        return json_safe(value.item(), nonfinite)
    return str(value)


__all__ = ["NonFinite", "json_safe"]
