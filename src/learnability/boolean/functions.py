"""Boolean functions on {0,1}^n: the zoo, truth tables, and one bit order everywhere.

Bit order: a string x ∈ {0,1}^n is the integer i = Σ_k x_k 2^k, so bit k of the index is x_k (x_0 is the
least significant bit) and a truth table has `tt[i] = f(x(i))`. `all_inputs(n)` returns the (2^n, n) matrix
in that order.

A `BooleanFunction` holds either a truth table or a vectorised callable on (B, n) uint8 batches (or both).
Zoo functions build their tables straight from per-bit tables (no (2^n, n) matrix), so n = 24 costs
16 MB, not 400 MB. Real-valued functions (MEAN) are allowed but flagged `real_valued`; analyses that need
Boolean values reject them with a `UserError`.

Majority tie rule: for even n, a tie (exactly n/2 ones) maps to 1, i.e. MAJ(x) = [Σx ≥ n/2];
`majority:ties=0` maps it to 0, MAJ(x) = [Σx > n/2] (Hahn & Rofin's published code).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from learnability.errors import UserError, did_you_mean

# Largest n for which a full truth table is built (2^30 bytes = 1 GiB of uint8); analyses add their own
# memory-budget check on top.
MAX_TABLE_N = 30
# Largest n a function may have at all (sampled analyses only; tables stop at MAX_TABLE_N).
MAX_N = 1 << 16
# Rows per chunk when a callable is evaluated on all inputs: bounds the (B, n) matrix to a few MB.
_CHUNK = 1 << 16

BatchFn = Callable[[np.ndarray], np.ndarray]


def check_n(n: Any, *, limit: int = MAX_TABLE_N) -> int:
    """Validate the number of input bits: an int with 1 ≤ n ≤ limit."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise UserError(f"n must be an integer, got {n!r}")
    n = int(n)
    if n <= 0:
        raise UserError(
            f"n={n} is not allowed; n must be a positive number of input bits (1..{limit})"
        )
    if n > limit:
        raise UserError(
            f"n={n} is too large to tabulate all 2^{n} inputs (limit n ≤ {limit}); "
            "use a Monte Carlo estimate (--samples) instead"
        )
    return n


def all_inputs(n: int) -> np.ndarray:
    """All 2^n strings as a (2^n, n) uint8 matrix; row i is x(i), column k is x_k = bit k of i."""
    n = check_n(n, limit=24)
    idx = np.arange(1 << n, dtype=np.int64)
    return ((idx[:, None] >> np.arange(n)) & 1).astype(np.uint8)


def bit_table(n: int, k: int) -> np.ndarray:
    """x_k over all 2^n inputs, shape (2^n,) uint8, without building index arrays."""
    half = np.zeros((1, 2, 1), dtype=np.uint8)
    half[0, 1, 0] = 1
    return np.broadcast_to(half, (1 << (n - k - 1), 2, 1 << k)).reshape(-1)


def popcount_table(n: int) -> np.ndarray:
    """|x| = number of ones of every input, shape (2^n,) uint8, built by doubling (O(2^n))."""
    pc = np.zeros(1 << n, dtype=np.uint8)
    size = 1
    for _ in range(n):
        np.add(pc[:size], 1, out=pc[size : 2 * size])
        size *= 2
    return pc


@dataclass
class BooleanFunction:
    """f: {0,1}^n → {0,1} (or → ℝ when `real_valued`).

    Give `table` (shape (2^n,)) or `fn` (maps a (B, n) uint8 batch to (B,) values), or both; `table_fn`
    (n ↦ table) is the zoo's fast path. `truth_table()` materialises and caches the table.
    """

    n: int
    name: str
    fn: BatchFn | None = None
    table: np.ndarray | None = None
    real_valued: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    table_fn: Callable[[int], np.ndarray] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.n = check_n(self.n, limit=MAX_N)
        if self.fn is None and self.table is None and self.table_fn is None:
            raise UserError(f"function {self.name!r} needs a truth table or a callable")
        if self.table is not None:
            self.table = _validate_table(self.table, self.n, self.name, self.real_valued)

    def truth_table(self) -> np.ndarray:
        """f on all 2^n inputs in index order: (2^n,) uint8 (float64 when real-valued)."""
        if self.table is None:
            check_n(self.n)
            if self.table_fn is not None:
                raw = self.table_fn(self.n)
            else:
                raw = np.concatenate(
                    [
                        np.asarray(self._call_fn(_input_rows(self.n, start, _CHUNK)))
                        for start in range(0, 1 << self.n, _CHUNK)
                    ]
                )
            self.table = _validate_table(raw, self.n, self.name, self.real_valued)
        return self.table

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Evaluate on a (B, n) batch of 0/1 strings; returns (B,)."""
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[1] != self.n:
            raise UserError(
                f"input batch has shape {x.shape}; expected (B, {self.n}) for {self.name}"
            )
        if self.fn is not None:
            return np.asarray(self._call_fn(x.astype(np.uint8, copy=False)))
        if self.n > 62:
            raise UserError(
                f"{self.name!r} has only a truth table; it cannot evaluate n={self.n} strings"
            )
        idx = (x.astype(np.int64) << np.arange(self.n)).sum(axis=1)
        return self.truth_table()[idx]

    def _call_fn(self, x: np.ndarray) -> np.ndarray:
        assert self.fn is not None
        out = np.asarray(self.fn(x))
        if out.shape != (x.shape[0],):
            raise UserError(
                f"function {self.name!r} returned shape {out.shape} for a batch of {x.shape[0]}; "
                "a vectorised callable must map (B, n) to (B,)"
            )
        return out

    def require_boolean(self, what: str = "this analysis") -> None:
        if self.real_valued:
            raise UserError(
                f"{what} needs a Boolean (0/1-valued) function, but {self.name!r} is real-valued"
            )

    def __repr__(self) -> str:
        kind = "real-valued" if self.real_valued else "Boolean"
        return f"BooleanFunction({self.name!r}, n={self.n}, {kind})"


def _input_rows(n: int, start: int, count: int) -> np.ndarray:
    idx = np.arange(start, min(start + count, 1 << n), dtype=np.int64)
    return ((idx[:, None] >> np.arange(n)) & 1).astype(np.uint8)


def _validate_table(raw: Any, n: int, name: str, real_valued: bool) -> np.ndarray:
    tt = np.asarray(raw).reshape(-1) if np.ndim(raw) else np.asarray(raw)
    if tt.ndim != 1 or tt.shape[0] != 1 << n:
        raise UserError(
            f"truth table of {name!r} has {tt.size} entries; for n={n} it must have 2^{n} = {1 << n}"
        )
    if real_valued:
        return tt.astype(np.float64, copy=False)
    if tt.dtype == np.bool_:
        return tt.view(np.uint8)
    if tt.dtype == np.uint8 and int(tt.max(initial=0)) <= 1:
        return tt
    bad = tt[(tt != 0) & (tt != 1)]
    if bad.size:
        raise UserError(
            f"truth table of {name!r} has value {bad[0]!r}; a Boolean function's values must be 0 or 1"
        )
    return tt.astype(np.uint8)


# ---------------------------------------------------------------------------------------------- the zoo


def parity(n: int) -> BooleanFunction:
    """PARITY(x) = x_0 ⊕ … ⊕ x_{n-1}; every input has sensitivity n."""
    return BooleanFunction(
        n, "parity", fn=lambda x: (x.sum(axis=1) & 1).astype(np.uint8),
        table_fn=lambda m: popcount_table(m) & 1,
    )  # fmt: skip


def _support(n: int, k: int | None, support: Any, seed: int) -> tuple[int, ...]:
    if support is not None:
        items = [support] if isinstance(support, int) else list(support)
        if not items or any(not isinstance(s, int | np.integer) or not 0 <= s < n for s in items):
            raise UserError(f"support {support!r} must be distinct bit indices in 0..{n - 1}")
        if len(set(items)) != len(items):
            raise UserError(f"support {support!r} repeats an index; indices must be distinct")
        if k is not None and k != len(items):
            raise UserError(f"k={k} does not match the support {list(items)} of size {len(items)}")
        return tuple(sorted(int(s) for s in items))
    if k is None:
        raise UserError(
            "sparse_parity needs k (support size) or support, e.g. sparse_parity:k=3,seed=1"
        )
    if not 1 <= k <= n:
        raise UserError(f"k={k} is not allowed for n={n}; k must be in 1..{n}")
    rng = np.random.default_rng(seed)
    return tuple(sorted(int(s) for s in rng.choice(n, size=k, replace=False)))


def sparse_parity(
    n: int, k: int | None = None, support: Any = None, seed: int = 0
) -> BooleanFunction:
    """XOR of the bits in `support` (given, or k indices drawn with `seed`); sensitivity ≡ k."""
    idx = _support(n, k, support, seed)

    def table(m: int) -> np.ndarray:
        out = np.zeros(1 << m, dtype=np.uint8)
        for s in idx:
            np.bitwise_xor(out, bit_table(m, s), out=out)
        return out

    def fn(x: np.ndarray) -> np.ndarray:
        return np.bitwise_xor.reduce(x[:, list(idx)], axis=1).astype(np.uint8)

    return BooleanFunction(
        n, "sparse_parity", fn=fn, table_fn=table, params={"support": list(idx), "k": len(idx)}
    )


def majority(n: int, ties: int = 1) -> BooleanFunction:
    """MAJ(x) = [Σx ≥ n/2]: ties (even n) go to `ties` (1, or 0 as in Hahn & Rofin's code: [Σx > n/2])."""
    if ties not in (0, 1):
        raise UserError(f"majority ties={ties!r} is not allowed; a tie maps to 0 or 1")
    off = 1 - ties  # 2Σx ≥ n + off: off = 1 makes a tie (2Σx = n) fall below
    return BooleanFunction(
        n, "majority", fn=lambda x: (2 * x.sum(axis=1, dtype=np.int64) >= n + off).astype(np.uint8),
        table_fn=lambda m: (2 * popcount_table(m).astype(np.int32) >= m + off).astype(np.uint8),
        params={} if ties == 1 else {"ties": 0},
    )  # fmt: skip


def first(n: int, i: int = 0) -> BooleanFunction:
    """Dictator x_i (FIRST is i = 0); every input has sensitivity 1."""
    if not isinstance(i, int | np.integer) or not 0 <= i < n:
        raise UserError(f"i={i!r} is not a bit of x0..x{n - 1}; i must be in 0..{n - 1}")
    return BooleanFunction(
        n, "first" if i == 0 else f"dictator_{i}", fn=lambda x: x[:, i].astype(np.uint8),
        table_fn=lambda m: bit_table(m, i).copy(),
        params={"i": int(i)},
    )  # fmt: skip


def mean(n: int) -> BooleanFunction:
    """MEAN(x) = Σx / n ∈ [0, 1] — real-valued, so Boolean-only analyses reject it."""
    return BooleanFunction(
        n, "mean", fn=lambda x: x.sum(axis=1, dtype=np.int64) / n,
        table_fn=lambda m: popcount_table(m) / m, real_valued=True,
    )  # fmt: skip


def and_(n: int) -> BooleanFunction:
    """AND of all bits."""
    return BooleanFunction(
        n,
        "and",
        fn=lambda x: np.asarray(x.all(axis=1), dtype=np.uint8),
        table_fn=lambda m: (popcount_table(m) == m).astype(np.uint8),
    )


def or_(n: int) -> BooleanFunction:
    """OR of all bits."""
    return BooleanFunction(
        n,
        "or",
        fn=lambda x: np.asarray(x.any(axis=1), dtype=np.uint8),
        table_fn=lambda m: (popcount_table(m) > 0).astype(np.uint8),
    )


def threshold(n: int, t: int | None = None) -> BooleanFunction:
    """THR_t(x) = [Σx ≥ t] for 0 ≤ t ≤ n+1 (t = 1 is OR, t = n is AND); default t = ⌈n/2⌉."""
    if t is None:
        t = (n + 1) // 2
    if not isinstance(t, int | np.integer) or not 0 <= t <= n + 1:
        raise UserError(f"threshold t={t!r} is not allowed for n={n}; t must be in 0..{n + 1}")
    return BooleanFunction(
        n, "threshold", fn=lambda x: (x.sum(axis=1, dtype=np.int64) >= t).astype(np.uint8),
        table_fn=lambda m: (popcount_table(m) >= t).astype(np.uint8),
        params={"t": int(t)},
    )  # fmt: skip


def random_function(n: int, seed: int = 0, p: float = 0.5) -> BooleanFunction:
    """Each f(x) independently 1 with probability p, drawn from `seed`."""
    if not 0.0 <= float(p) <= 1.0:
        raise UserError(f"p={p!r} is not a probability; p must be in [0, 1]")

    def table(m: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        if p == 0.5:
            return rng.integers(0, 2, size=1 << m, dtype=np.uint8)
        return (rng.random(1 << m) < p).astype(np.uint8)

    return BooleanFunction(n, "random", table_fn=table, params={"seed": int(seed), "p": float(p)})


ZOO: dict[str, Callable[..., BooleanFunction]] = {
    "parity": parity,
    "sparse_parity": sparse_parity,
    "majority": majority,
    "first": first,
    "dictator": first,
    "mean": mean,
    "and": and_,
    "or": or_,
    "threshold": threshold,
    "random": random_function,
}
_ALIASES = {"maj": "majority", "xor": "parity", "sparse_xor": "sparse_parity", "thr": "threshold"}


def zoo_names() -> list[str]:
    return list(ZOO)


def make_function(name: str, n: int, **params: Any) -> BooleanFunction:
    """A zoo function by name, e.g. make_function("sparse_parity", 10, k=3, seed=1)."""
    n = check_n(n, limit=MAX_N)
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in ZOO:
        raise UserError(
            f"unknown function {name!r}{did_you_mean(name.lower(), ZOO)}; "
            f"known: {', '.join(ZOO)} (or an expression over x0..x{n - 1}, or a truth-table file)"
        )
    factory = ZOO[key]
    allowed = [p for p in inspect.signature(factory).parameters if p != "n"]
    for p in params:
        if p not in allowed:
            hint = f"allowed: {', '.join(allowed)}" if allowed else "it takes no parameters"
            raise UserError(f"unknown parameter {p!r} for {key}{did_you_mean(p, allowed)}; {hint}")
    for p, value in params.items():
        _check_param(key, p, value)
    return factory(n, **params)


# What each zoo parameter must be, checked before the factory sees it (a factory's own checks then
# cover the ranges that depend on n).
_PARAM_KINDS = {
    "k": "int",
    "i": "int",
    "t": "int",
    "ties": "int",
    "seed": "seed",
    "p": "probability",
    "support": "indices",
}
MAX_SEED = 2**63 - 1


def _check_param(function: str, name: str, value: Any) -> None:
    kind = _PARAM_KINDS.get(name)
    where = f"{function} parameter {name}={value!r}"
    is_int = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if kind == "int" and not is_int:
        raise UserError(f"{where} is not allowed; it must be an integer")
    if kind == "seed" and not (is_int and 0 <= value <= MAX_SEED):
        raise UserError(f"{where} is not allowed; a seed is an integer in 0..2^63-1")
    if kind == "probability":
        ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
        if not ok:
            raise UserError(f"{where} is not allowed; it must be a probability in [0, 1]")
    if kind == "indices":
        items = value if isinstance(value, list) else [value]
        if not items or not all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) for v in items
        ):
            raise UserError(
                f"{where} is not allowed; give bit indices, e.g. support=[0,3] (or k=2,seed=1)"
            )


# -------------------------------------------------------------------------------- specs from the CLI

_NAME_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*(?::(.*))?$")
_VAR = re.compile(r"^x\d+$")


def _parse_value(text: str) -> Any:
    text = text.strip()
    if not text.isascii():  # int() would read '٣' as 3: non-ASCII stays text and is refused
        return text
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_parse_value(t) for t in inner.split(",")] if inner else []
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_params(text: str) -> dict[str, Any]:
    """'k=3,seed=1,support=[0,2]' → {'k': 3, 'seed': 1, 'support': [0, 2]}."""
    params: dict[str, Any] = {}
    depth, start, parts = 0, 0, []
    for pos, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(text[start:pos])
            start = pos + 1
    parts.append(text[start:])
    for part in parts:
        if not part.strip():
            continue
        if "=" not in part:
            raise UserError(f"parameter {part.strip()!r} must be written key=value, e.g. k=3")
        key, value = part.split("=", 1)
        key = key.strip()
        if not key:
            raise UserError(f"parameter {part.strip()!r} has no name; write key=value, e.g. k=3")
        if key in params:
            raise UserError(f"parameter {key!r} is given twice in {text!r}; give it once")
        params[key] = _parse_value(value)
    return params


def load_table(path: str | Path, n: int | None = None) -> BooleanFunction:
    """A truth table from a `.npy` file or a text file of 0/1 characters (whitespace ignored)."""
    path = Path(path)
    if not path.is_file():  # a FIFO is never opened: reading it waits for a writer
        what = "is not a regular file (a FIFO or a device)" if path.exists() else "does not exist"
        raise UserError(f"truth-table file {str(path)!r} {what}")
    if path.suffix == ".npy":
        try:
            raw = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise UserError(f"cannot read {str(path)!r} as a .npy array: {exc}") from None
        raw = np.asarray(raw).reshape(-1)
    else:
        text = "".join(path.read_text(errors="replace").split())
        bad = next((c for c in text if c not in "01"), None)
        if bad is not None:
            raise UserError(
                f"truth-table file {str(path)!r} contains {bad!r}; a text table holds only 0 and 1"
            )
        raw = np.frombuffer(text.encode(), dtype=np.uint8) - ord("0")
    size = raw.size
    inferred = size.bit_length() - 1
    if size == 0 or 1 << inferred != size:
        raise UserError(
            f"truth table in {str(path)!r} has {size} entries; the length must be a power of two, 2^n"
        )
    if n is None:
        n = inferred
    if size != 1 << n:
        raise UserError(
            f"truth table in {str(path)!r} has {size} entries = 2^{inferred}; for n={n} it must have {1 << n}"
        )
    return BooleanFunction(n, path.name, table=raw)


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name longer than the file system allows, a NUL byte
        return False


# -------------------------------------------------------------------------- functions given by reference
PY_PREFIX = "py:"
_PY_SPEC = re.compile(r"^py:([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*):([A-Za-z_][\w]*)$")
_PROBE_ROWS = 64


def python_function(spec: str, n: int) -> BooleanFunction:
    """`py:package.module:fn`: a vectorised callable of a (B, n) 0/1 uint8 array returning (B,) 0/1 values,
    evaluated at whatever n is asked for (so a sweep over n works).

    This imports the module the spec names and runs its code, as `import package.module` would: only
    code the user chose to name. The module is looked up on the import path, then in the current
    folder. The function is checked on a few strings now (a batch of every string for n ≤ 6, else 64
    fixed ones) and its output on every later batch is checked as well: a wrong shape or a value other
    than 0/1 is a UserError naming the spec. The run id covers the spec, not the code: edit the function
    and the store still holds the old runs under the same ids (give the edited one a new name)."""
    match = _PY_SPEC.match(spec.strip())
    if match is None:
        raise UserError(
            f"function spec {spec!r} is not of the form py:package.module:function "
            "(a module on the import path, then the name of a callable in it)"
        )
    module_name, attr = match.groups()
    module = _import_user_module(module_name, spec)
    fn = getattr(module, attr, None)
    if fn is None:
        names = [k for k in vars(module) if not k.startswith("_") and callable(vars(module)[k])]
        raise UserError(
            f"function spec {spec!r}: module {module_name!r} has no {attr!r}"
            f"{did_you_mean(attr, names)}; its callables: {', '.join(sorted(names)) or 'none'}"
        )
    if not callable(fn):
        raise UserError(
            f"function spec {spec!r}: {module_name}.{attr} is not callable (its type is {type(fn).__name__})"
        )
    n = check_n(n, limit=MAX_N)
    checked = _checked_callable(fn, spec)
    checked(_probe_rows(n))  # fail now, at the spec, not inside a worker
    return BooleanFunction(n, spec.strip(), fn=checked, params={"reference": spec.strip()})


def _import_user_module(name: str, spec: str) -> Any:
    try:
        return _import(name, spec)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        if not _is_the_module(exc, name) or here in sys.path:
            raise _not_importable(name, spec, exc) from None
    # the `learnability` script's import path starts at its own folder, not the user's: look in the
    # current folder too, after everything installed (so it cannot shadow an installed package)
    sys.path.append(here)
    try:
        return _import(name, spec)
    except ModuleNotFoundError as exc:
        raise _not_importable(name, spec, exc) from None


def _import(name: str, spec: str) -> Any:
    """Import `name`; a missing module stays a ModuleNotFoundError, any other failure of the user's
    module while it is imported becomes a UserError."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if _is_the_module(exc, name):
            raise
        failure: BaseException = exc  # the user's module imports something that is not installed
    except SystemExit as exc:  # the module ends the program while imported: refused, not exit 0
        raise UserError(
            f"function spec {spec!r}: importing {name!r} called sys.exit({exc.code!r}); a module "
            "given by py: must define the function, not end the program"
        ) from None
    except Exception as exc:
        failure = exc
    raise UserError(
        f"function spec {spec!r}: importing {name!r} failed: {type(failure).__name__}: {failure}"
    )


def _is_the_module(exc: ModuleNotFoundError, name: str) -> bool:
    missing = exc.name or name
    return name == missing or name.startswith(missing + ".")


def _not_importable(name: str, spec: str, exc: ModuleNotFoundError) -> UserError:
    return UserError(
        f"function spec {spec!r}: module {name!r} cannot be imported (no module "
        f"{exc.name or name!r} on the import path or in the current folder {os.getcwd()!r})"
    )


def _checked_callable(fn: Callable[[np.ndarray], Any], spec: str) -> BatchFn:
    def checked(x: np.ndarray) -> np.ndarray:
        try:
            raw = fn(x)
        except UserError:
            raise
        except SystemExit as exc:  # (KeyboardInterrupt is not caught: Ctrl-C stays exit 130)
            raise UserError(
                f"function {spec!r} called sys.exit({exc.code!r}) on a ({x.shape[0]}, "
                f"{x.shape[1]}) 0/1 batch; it must return one 0/1 value per row"
            ) from None
        except Exception as exc:
            raise UserError(
                f"function {spec!r} raised {type(exc).__name__} on a ({x.shape[0]}, {x.shape[1]}) "
                f"0/1 batch: {exc}"
            ) from None
        try:
            out = np.asarray(raw)
        except Exception:
            out = np.asarray(None)
        if out.shape != (x.shape[0],):
            raise UserError(
                f"function {spec!r} returned shape {out.shape} for a ({x.shape[0]}, {x.shape[1]}) "
                f"batch; it must return one value per row, shape ({x.shape[0]},)"
            )
        if out.dtype == np.bool_:
            return out.view(np.uint8)
        if not (np.issubdtype(out.dtype, np.integer) or np.issubdtype(out.dtype, np.floating)):
            raise UserError(
                f"function {spec!r} returned values of type {out.dtype}; it must return 0/1 numbers"
            )
        bad = out[(out != 0) & (out != 1)]
        if bad.size:
            raise UserError(
                f"function {spec!r} returned {bad.flat[0].item()!r}; a Boolean function's values must be 0 or 1"
            )
        return out.astype(np.uint8)

    return checked


def _probe_rows(n: int) -> np.ndarray:
    if n <= 6:
        return _input_rows(n, 0, 1 << n)
    return np.random.default_rng(0).integers(0, 2, size=(_PROBE_ROWS, n), dtype=np.uint8)


def resolve_function(spec: str, n: int | None = None) -> BooleanFunction:
    """A function from a CLI-style spec: a zoo name with optional params (`sparse_parity:k=3,seed=1`),
    an expression over x0..x{n-1} (`x0 ^ x3 | maj(x1,x2,x4)`), a truth-table file path (.npy or text),
    or a callable by reference, `py:package.module:fn` (see `python_function`).
    `n` may be omitted only for a file (it is then inferred from the table length)."""
    # expr builds BooleanFunctions, so it imports this module: import it when first needed
    from learnability.boolean.expr import expression_function

    if not isinstance(spec, str) or not spec.strip():
        raise UserError(
            f"function spec {spec!r} is empty; give a zoo name, an expression or a file"
        )
    text = spec.strip()
    if text.startswith(PY_PREFIX):
        if n is None:
            raise UserError(f"n (the number of input bits) is required for {text!r}")
        return python_function(text, n)
    looks_like_path = text.endswith((".npy", ".txt")) or "/" in text or _is_file(text)
    if looks_like_path and not any(op in text for op in "^|&~("):
        return load_table(text, n)
    if n is None:
        raise UserError(f"n (the number of input bits) is required for {text!r}")
    n = check_n(n, limit=MAX_N)
    match = _NAME_SPEC.match(text)
    if match and not _VAR.match(match.group(1)):
        params = parse_params(match.group(2)) if match.group(2) is not None else {}
        return make_function(match.group(1), n, **params)
    return expression_function(text, n)
