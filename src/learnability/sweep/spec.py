"""Sweeps: a base config, a grid and/or random product over dotted fields, paired axes, times seeds.

    Sweep(name="sensitivity/parity", job="train",
          base={"task": {"name": "boolean", "function": "parity", "n": 10}},
          grid={"task.n": [10, 20, 30]},
          zip={"train.freeze": ["embeddings", "full"], "train.lr": [1e-2, 1e-3]},
          random={"train.lr": {"log_uniform": [1e-4, 5e-4]}}, samples=4,
          seeds=[0, 1, 2], seed_also=["data_seed"])

`expand()` gives grid x zip x samples x seeds RunSpecs. `zip` pairs axes: its lists (all of one length)
are read in lockstep, position i of every list together, so the example gives embedding-only training
at lr 1e-2 and full training at 1e-3, each crossed with the grid; several groups (a list of such
mappings) are crossed with each other. A sweep without `zip` expands exactly as before it existed. Random draws come from a generator seeded by the sweep
name, so expanding twice gives the same runs (and the same run ids). Every config is resolved through
the job's config class before anything runs; any problem (unknown key, wrong type, empty grid list,
a grid field the config does not have) is one UserError and nothing is run or written.

Random specs: `{"uniform": [lo, hi]}`, `{"log_uniform": [lo, hi]}`, `{"int_uniform": [lo, hi]}`
(inclusive), `{"choice": [a, b, ...]}`.

Seeds: each seed is written to the `seed_key` field (default `seed`, the initialisation) and to every
field of `seed_also` (e.g. `["data_seed"]`: each unit also draws its own data), so one seed names one
independent unit whichever of its draws it fixes; adding seeds (the adaptive driver) adds whole units.

YAML form (`load_sweep`): keys `name, job, base, grid, zip, random, samples, seeds, seed_key, seed_also,
study`.
Overrides `a.b=v` set `base` (and drop a grid or zip axis on the same field); `grid.a.b=[...]` set a
grid axis; `zip.a.b=[...]` set an axis of the (first) zip group; `random.a.b={...}`, `samples=N`,
`seeds=[...]`, `name=...` set those keys.

Labels: a sweep's `study` (the label the store files its runs under, and `results --study` selects) is
the part of its name before the first "/" unless `study` is given; `name=` on the command line renames
the sweep and relabels it the same way (a sweep named without "/" has no study label).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import math
import random as _random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from learnability.config import (
    config_hash,
    from_dict,
    load_yaml,
    parse_override,
    set_dotted,
    to_dict,
    validate_key,
)
from learnability.errors import UserError, did_you_mean
from learnability.sweep.jobs import get_job

__all__ = ["MAX_RUNS", "RunSpec", "Sweep", "check_run_count", "load_sweep", "study_label"]

_RANDOM_KINDS = ("uniform", "log_uniform", "int_uniform", "choice")
# Declared limits: a sweep beyond them is a typo (or would take longer to expand than to notice).
# MAX_RUNS bounds one command's runs, however many sweeps (and studies) it holds.
MAX_RUNS = 100_000
MAX_SAMPLES = 100_000
MAX_SEED = 2**63 - 1
_YAML_KEYS = (
    "name",
    "job",
    "base",
    "grid",
    "zip",
    "random",
    "samples",
    "seeds",
    "seed_key",
    "seed_also",
    "study",
)


@dataclass
class RunSpec:
    """One run of a sweep: its id (hash of job + resolved config), the config and where it came from."""

    run_id: str
    sweep: str
    job: str
    config: Any  # the resolved config dataclass
    config_dict: dict  # its plain form (defaults included), what is stored and hashed
    study: str = ""
    seed: int | None = None


@dataclass
class Sweep:
    name: str
    job: str
    base: dict = field(default_factory=dict)
    grid: dict[str, list] = field(default_factory=dict)
    random: dict[str, dict] | None = None
    samples: int = 0
    seeds: list[int] = field(default_factory=lambda: [0])
    seed_key: str = "seed"
    study: str = ""
    # paired axes: {field: [values]} read in lockstep (or a list of such groups, crossed)
    zip: dict[str, list] | list[dict[str, list]] = field(default_factory=dict)
    # further fields that take each seed too (["data_seed"]: a unit's own data stream)
    seed_also: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.study:
            self.study = study_label(self.name)

    def zip_groups(self) -> list[dict[str, list]]:
        """The zip groups as a list (an empty list for no pairing)."""
        if isinstance(self.zip, dict):
            return [self.zip] if self.zip else []
        return list(self.zip) if isinstance(self.zip, list) else []

    def _check(self, config_cls: type) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise UserError(f"sweep name {self.name!r} is not allowed; give a non-empty text")
        where = f"sweep {self.name!r}"
        for key in ("job", "seed_key", "study"):
            if not isinstance(getattr(self, key), str):
                raise UserError(
                    f"{where}: {key}={getattr(self, key)!r} is not allowed; give a text"
                )
        if (
            isinstance(self.samples, bool)
            or not isinstance(self.samples, int)
            or not 0 <= self.samples <= MAX_SAMPLES
        ):
            raise UserError(
                f"{where}: samples={self.samples!r} is not allowed; give an integer in 0..{MAX_SAMPLES:,}"
            )
        if not isinstance(self.base, dict):
            raise UserError(f"{where}: base must be a mapping, got {self.base!r}")
        if not isinstance(self.grid, dict):
            raise UserError(f"{where}: grid must be a mapping of field -> list, got {self.grid!r}")
        for key, values in self.grid.items():
            if not isinstance(values, list):
                raise UserError(f"{where}: grid.{key} must be a list of values, got {values!r}")
            if not values:
                raise UserError(f"{where}: grid.{key} is empty; give at least one value")
            validate_key(config_cls, key, self.base)
        self._check_zip(config_cls, where)
        for key, spec in (self.random or {}).items():
            validate_key(config_cls, key, self.base)
            _check_random(where, key, spec)
        if self.random and self.samples < 1:
            raise UserError(
                f"{where}: random fields given but samples={self.samples}; set samples >= 1"
            )
        if not isinstance(self.seeds, list) or not self.seeds:
            raise UserError(f"{where}: seeds must be a non-empty list of ints, got {self.seeds!r}")
        for s in self.seeds:
            if not isinstance(s, int) or isinstance(s, bool):
                raise UserError(f"{where}: seed {s!r} is not an int")
            # the store keeps a run's seed as a 64-bit signed integer, as torch's generators do
            if not 0 <= s <= MAX_SEED:
                raise UserError(
                    f"{where}: seed {s} is not allowed; seeds must be integers in 0..{MAX_SEED}"
                )
        check_run_count(self.size(), where, "grid × zip × samples × seeds")

    def _check_zip(self, config_cls: type, where: str) -> None:
        groups = self.zip if isinstance(self.zip, list) else [self.zip]
        if not isinstance(self.zip, (dict, list)) or not all(isinstance(g, dict) for g in groups):
            raise UserError(
                f"{where}: zip must be a mapping of field -> list (or a list of such mappings), "
                f"got {self.zip!r}"
            )
        seen: set[str] = set()
        for g, group in enumerate(groups):
            label = "zip" if isinstance(self.zip, dict) else f"zip[{g}]"
            if not group:
                if isinstance(self.zip, list):
                    raise UserError(f"{where}: {label} is empty; give at least one field")
                continue
            lengths = {}
            for key, values in group.items():
                if not isinstance(values, list):
                    raise UserError(
                        f"{where}: {label}.{key} must be a list of values, got {values!r}"
                    )
                if not values:
                    raise UserError(f"{where}: {label}.{key} is empty; give at least one value")
                validate_key(config_cls, key, self.base)
                if key in self.grid:
                    raise UserError(
                        f"{where}: {key} is both a grid axis and a zip axis; give it in one of them"
                    )
                if key in seen:
                    raise UserError(f"{where}: {key} is in two zip groups; give it in one")
                if key in (self.random or {}):
                    raise UserError(
                        f"{where}: {key} is both a random field and a zip axis; give it in one"
                    )
                seen.add(key)
                lengths[key] = len(values)
            if len(set(lengths.values())) > 1:
                shown = ", ".join(f"{k} has {n}" for k, n in lengths.items())
                raise UserError(
                    f"{where}: the lists of {label} are read in lockstep and must have one length; "
                    f"{shown}"
                )

    def _zip_points(self) -> list[list[tuple[str, Any]]]:
        """Every combination of one position per zip group: [(field, value), ...] (one empty for none)."""
        per_group = [
            [[(k, group[k][i]) for k in group] for i in range(len(next(iter(group.values()))))]
            for group in self.zip_groups()
            if group
        ]
        return [list(itertools.chain.from_iterable(c)) for c in itertools.product(*per_group)]

    def size(self) -> int:
        """How many runs `expand` would give at most (before duplicates are merged)."""
        count = max(self.samples, 1) if self.random else 1
        for values in self.grid.values():
            count *= len(values) if isinstance(values, list) else 1
        for group in self.zip_groups():
            lists = (
                [v for v in group.values() if isinstance(v, list)]
                if isinstance(group, dict)
                else []
            )
            count *= max((len(v) for v in lists), default=1)
        return count * (len(self.seeds) if isinstance(self.seeds, list) else 1)

    def _seed_applies(self, config_cls: type) -> bool:
        if not isinstance(self.seed_also, list) or not all(
            isinstance(k, str) and k for k in self.seed_also
        ):
            raise UserError(
                f"sweep {self.name!r}: seed_also={self.seed_also!r} is not allowed; give a list of "
                "config field names, e.g. ['data_seed']"
            )
        for key in self.seed_also:
            if (
                key == self.seed_key
                or key in self.grid
                or key in (self.random or {})
                or any(key in g for g in self.zip_groups())
            ):
                raise UserError(
                    f"sweep {self.name!r}: seed_also field {key!r} is also the seed_key or a grid, "
                    "zip or random axis; give it in one place"
                )
            validate_key(config_cls, key, self.base)
        if self.seed_also and not self.seed_key:
            raise UserError(
                f"sweep {self.name!r}: seed_also={self.seed_also} needs a seed_key (the seeds it copies)"
            )
        if not self.seed_key:
            return False
        try:
            validate_key(config_cls, self.seed_key, self.base)
        except UserError:
            if self.seeds == [0]:
                return False  # a job without a seed field, default seeds: nothing to vary
            raise UserError(
                f"sweep {self.name!r}: seed_key {self.seed_key!r} is not a field of {config_cls.__name__}"
                f"{did_you_mean(self.seed_key, [f for f in to_dict(from_dict(config_cls, self.base))])}"
            ) from None
        self._refuse_seed_axes()
        return True

    def _refuse_seed_axes(self) -> None:
        """The seed fields take each of `seeds` in turn, written last: a value given for them in
        `base` or as a grid, zip or random axis would be overwritten (a seed grid silently shrinking
        to one run), so it is refused with the spelling that does what was meant."""
        for key in [self.seed_key, *self.seed_also]:
            axis = (
                "grid"
                if key in self.grid
                else "zip"
                if any(key in g for g in self.zip_groups())
                else "random"
                if key in (self.random or {})
                else "base"
                if _has_dotted(self.base, key)
                else None
            )
            if axis is None:
                continue
            if axis == "random":
                hint = "give the seeds as a list, e.g. seeds: [0, 1, 2], or set seed_key: '' to draw it"
            else:
                values = self.grid.get(key) or next(
                    (g[key] for g in self.zip_groups() if key in g), None
                )
                shown = values if isinstance(values, list) else [_get_dotted(self.base, key)]
                hint = f"list them in seeds: {shown!r} (every seed runs at every other point)"
            raise UserError(
                f"sweep {self.name!r}: {key!r} is set by the sweep's seeds (each seed is one "
                f"independent unit), so a {axis} value for it would be overwritten; {hint}"
            )

    def _samples(self) -> list[dict[str, Any]]:
        if not self.random:
            return [{}]
        # seeded from the name (not Python's salted hash) so expansion is the same in every process
        rng = _random.Random(int(hashlib.sha256(self.name.encode()).hexdigest()[:16], 16))
        draws = []
        for _ in range(self.samples):
            draws.append({k: _draw(rng, spec) for k, spec in sorted(self.random.items())})
        return draws

    def check(self) -> type:
        """Everything about this sweep that can be checked without building its runs: the job, the
        shape and types of every field, the axes against the job's config class, the seeds and the
        run limit (UserError, one line). Cheap whatever the size; returns the config class."""
        if not isinstance(self.job, str):
            raise UserError(
                f"sweep {self.name!r}: job={self.job!r} is not allowed; give a job name"
            )
        cls: type = get_job(self.job).config_cls
        try:
            self._check(cls)
            self._seed_applies(cls)
        except UserError as exc:  # name the sweep: a study or command may hold several
            if str(exc).startswith(f"sweep {self.name!r}"):
                raise
            raise UserError(f"sweep {self.name!r}: {exc}") from None
        return cls

    def expand(self, progress: Callable[[int, int], None] | None = None) -> list[RunSpec]:
        """Every run of this sweep, resolved and validated (raises UserError before anything runs).

        `progress(done, total)` is called every 500 configs (a large sweep takes seconds)."""
        cls = self.check()
        with_seed = self._seed_applies(cls)
        keys = list(self.grid)
        runs: list[RunSpec] = []
        seen: set[str] = set()
        samples = self._samples()
        paired = self._zip_points()
        seeds = self.seeds if with_seed else [None]
        # grid outermost, then zip positions, random draws and seeds (without zip: the order before it)
        points = itertools.product(
            itertools.product(*(self.grid[k] for k in keys)), paired, samples, seeds
        )
        for values, pairs, draw, seed in points:
            data = copy.deepcopy(self.base)
            for k, v in [*zip(keys, values), *pairs]:
                set_dotted(data, k, copy.deepcopy(v))
            for k, v in draw.items():
                set_dotted(data, k, v)
            if seed is not None:
                for key in [self.seed_key, *self.seed_also]:
                    set_dotted(data, key, seed)
            try:
                config = from_dict(cls, data)
            except UserError as exc:
                raise UserError(f"sweep {self.name!r}: {exc}") from None
            run_id = config_hash(self.job, config)
            if run_id in seen:
                continue
            seen.add(run_id)
            runs.append(
                RunSpec(run_id, self.name, self.job, config, to_dict(config), self.study, seed)
            )
            if progress is not None and len(runs) % 500 == 0:
                progress(len(runs), self.size())
        return runs

    def to_yaml_dict(self) -> dict:
        out: dict[str, Any] = {"name": self.name, "job": self.job, "base": self.base}
        if self.grid:
            out["grid"] = self.grid
        if self.zip_groups():
            out["zip"] = self.zip
        if self.random:
            out["random"], out["samples"] = self.random, self.samples
        out["seeds"] = self.seeds
        if self.seed_also:
            out["seed_also"] = self.seed_also
        return out


def check_run_count(count: int, where: str, how: str = "") -> None:
    """Refuse `count` runs above the declared limit (one sweep, or every sweep of a command)."""
    if count > MAX_RUNS:
        counted = f" ({how})" if how else ""
        raise UserError(
            f"{where} asks for {count:,} runs{counted}; a command may run at most {MAX_RUNS:,} runs: "
            "split it or shrink the grid"
        )


def _has_dotted(data: Any, key: str) -> bool:
    node = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _get_dotted(data: Any, key: str) -> Any:
    node = data
    for part in key.split("."):
        node = node[part]
    return node


def _check_random(where: str, key: str, spec: Any) -> None:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise UserError(
            f"{where}: random.{key} must be one of {{kind: args}} with kind in {', '.join(_RANDOM_KINDS)}; got {spec!r}"
        )
    kind, args = next(iter(spec.items()))
    if kind not in _RANDOM_KINDS:
        raise UserError(
            f"{where}: random.{key}: unknown distribution {kind!r}{did_you_mean(kind, _RANDOM_KINDS)}; "
            f"allowed: {', '.join(_RANDOM_KINDS)}"
        )
    if kind == "choice":
        if not isinstance(args, list) or not args:
            raise UserError(f"{where}: random.{key}.choice must be a non-empty list, got {args!r}")
        return
    ok = (
        isinstance(args, list)
        and len(args) == 2
        and all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args)
        and args[0] <= args[1]
    )
    if not ok:
        raise UserError(
            f"{where}: random.{key}.{kind} must be [low, high] with low <= high, got {args!r}"
        )
    if kind == "log_uniform" and args[0] <= 0:
        raise UserError(f"{where}: random.{key}.log_uniform needs low > 0, got {args!r}")
    if kind == "int_uniform" and not all(isinstance(a, int) for a in args):
        raise UserError(f"{where}: random.{key}.int_uniform needs int bounds, got {args!r}")


def _draw(rng: _random.Random, spec: dict) -> Any:
    kind, args = next(iter(spec.items()))
    if kind == "uniform":
        return rng.uniform(float(args[0]), float(args[1]))
    if kind == "log_uniform":
        return math.exp(rng.uniform(math.log(args[0]), math.log(args[1])))
    if kind == "int_uniform":
        return rng.randint(args[0], args[1])
    return copy.deepcopy(rng.choice(args))


_KIND_WORDS = {
    "samples": f"an integer in 0..{MAX_SAMPLES:,}",
    "seeds": "a list of integers, e.g. seeds=[0,1,2]",
    "name": "a text",
    "seed_key": "a config field name",
    "study": "a study name",
}


def load_sweep(path: str | Path, overrides: list[str] | None = None) -> Sweep:
    """Read a sweep YAML file and apply command-line overrides; the result is not expanded yet."""
    data = load_yaml(path)
    for key in data:
        if key not in _YAML_KEYS:
            raise UserError(
                f"{path}: unknown key {key!r}{did_you_mean(str(key), _YAML_KEYS)}; allowed: {', '.join(_YAML_KEYS)}"
            )
    if "job" not in data:
        raise UserError(f"{path}: missing 'job' (the registered job every run calls, e.g. train)")
    if not isinstance(data["job"], str):
        raise UserError(f"{path}: job must be a job name, got {data['job']!r}")
    for key, kind in (("base", dict), ("grid", dict), ("random", dict), ("seeds", list)):
        # (zip: a mapping or a list of mappings, checked with the sweep)
        if key in data and data[key] is not None and not isinstance(data[key], kind):
            raise UserError(f"{path}: {key} must be a {kind.__name__}, got {data[key]!r}")
    samples = data.get("samples", 0)
    if not isinstance(samples, int) or isinstance(samples, bool) or not 0 <= samples <= MAX_SAMPLES:
        raise UserError(
            f"{path}: samples={samples!r} is not allowed; give an integer in 0..{MAX_SAMPLES:,}"
        )
    sweep = Sweep(
        name=str(data.get("name") or Path(path).stem),
        job=data["job"],
        base=data.get("base") or {},
        grid=data.get("grid") or {},
        random=data.get("random") or None,
        samples=samples,
        seeds=data.get("seeds", [0]),
        seed_key=data.get("seed_key", "seed"),
        seed_also=data.get("seed_also") or [],
        study=str(data.get("study") or ""),
        zip=data.get("zip") or {},
    )
    labelled = bool(data.get("study"))  # an explicit study label is kept when the sweep is renamed
    cls = get_job(sweep.job).config_cls
    for text in overrides or []:
        key, value = parse_override(text)
        head, _, rest = key.partition(".")
        if head == "grid" and rest:
            validate_key(cls, rest, sweep.base)
            _drop_zip_axis(sweep, rest)
            sweep.grid[rest] = value if isinstance(value, list) else [value]
        elif head == "zip" and rest:
            validate_key(cls, rest, sweep.base)
            sweep.grid.pop(rest, None)
            _drop_zip_axis(sweep, rest)
            groups = sweep.zip_groups() or [{}]
            groups[0][rest] = value if isinstance(value, list) else [value]
            sweep.zip = groups[0] if isinstance(sweep.zip, dict) else groups
        elif head == "random" and rest:
            validate_key(cls, rest, sweep.base)
            sweep.random = {**(sweep.random or {}), rest: value}
        elif key in ("samples", "seeds", "name", "seed_key", "study"):
            kinds = {"samples": int, "seeds": list, "name": str, "seed_key": str, "study": str}
            if isinstance(value, bool) or not isinstance(value, kinds[key]):
                raise UserError(
                    f"override {text!r}: {key} must be {_KIND_WORDS[key]}, got {value!r}"
                )
            setattr(sweep, key, value)
            labelled = labelled or key == "study"
            if key == "name" and not labelled:
                sweep.study = study_label(sweep.name)
        else:
            validate_key(cls, key, sweep.base)
            set_dotted(sweep.base, key, value)
            # an explicit value wins over a grid or zip axis on the same field
            sweep.grid.pop(key, None)
            _drop_zip_axis(sweep, key)
    return sweep


def study_label(name: str) -> str:
    """The study label of a sweep named `name`: the part before the first "/", or "" for none."""
    return name.split("/", 1)[0] if isinstance(name, str) and "/" in name else ""


def _drop_zip_axis(sweep: Sweep, key: str) -> None:
    """Remove `key` from every zip group (a group left empty goes)."""
    if isinstance(sweep.zip, dict):
        sweep.zip.pop(key, None)
    elif isinstance(sweep.zip, list):
        for group in sweep.zip:
            if isinstance(group, dict):
                group.pop(key, None)
        sweep.zip = [g for g in sweep.zip if g != {}]
