"""learnability: which functions can a transformer learn, and why.

Boolean analysis (`learnability.boolean`), instrumented transformers (`learnability.models`), tasks,
one training engine (`learnability.train`), measurements (`learnability.measure`), sweeps with a
crash-safe store (`learnability.sweep`), reports (`learnability.report`) and the four paper studies
(`learnability.studies`). See docs/ARCHITECTURE.md.

Stored runs as a pandas DataFrame: `learnability.results(sweep=..., study=..., status=..., results="results")`;
"learned in k of m units" with a Wilson interval: `learnability.rate(k, m)`, and per group of a frame,
`learnability.rates(df, by=[...], success="converged")` (see `learnability.frame`).
"""

from __future__ import annotations

__version__ = "0.1.0"

# The DataFrame helpers import pandas (and the store): loaded when first asked for, so `import learnability`
# and the command line stay quick.
_FRAME = ("results", "rate", "rates", "column", "Rate")


def __getattr__(name: str) -> object:
    if name in _FRAME:
        from learnability import frame

        return getattr(frame, name)
    raise AttributeError(f"module 'learnability' has no attribute {name!r}")


__all__ = ["Rate", "__version__", "column", "rate", "rates", "results"]
