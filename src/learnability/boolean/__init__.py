"""Boolean functions and their exact / sampled sensitivity and Fourier analysis.

    >>> from learnability.boolean import profile, majority
    >>> p = profile(majority(11))          # or profile("x0 ^ x3 | maj(x1,x2,x4)", n=5)
    >>> p.counts, p.average, p.degree

Bit order: bit k of a truth-table index is x_k (see `functions.py`).
"""

from learnability.boolean.analysis import (
    EXACT_MAX_N,
    SensitivityProfile,
    fourier_spectrum,
    profile,
    profile_from_truth_table,
    release_workspace,
    sample_profile,
    sensitivity,
)
from learnability.boolean.expr import expression_function
from learnability.boolean.functions import (
    ZOO,
    BooleanFunction,
    all_inputs,
    and_,
    first,
    load_table,
    majority,
    make_function,
    mean,
    or_,
    parity,
    random_function,
    resolve_function,
    sparse_parity,
    threshold,
)

__all__ = [
    "EXACT_MAX_N",
    "ZOO",
    "BooleanFunction",
    "SensitivityProfile",
    "all_inputs",
    "and_",
    "expression_function",
    "first",
    "fourier_spectrum",
    "load_table",
    "majority",
    "make_function",
    "mean",
    "or_",
    "parity",
    "profile",
    "profile_from_truth_table",
    "random_function",
    "release_workspace",
    "resolve_function",
    "sample_profile",
    "sensitivity",
    "sparse_parity",
    "threshold",
]
