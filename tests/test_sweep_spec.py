"""Sweep expansion: grid x random x seeds, determinism, validation before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from learnability.errors import UserError
from learnability.sweep import Sweep, get_job, load_sweep
from learnability.sweep.testing import ProbeConfig


def test_grid_times_seeds_and_ids():
    sweep = Sweep(
        "s/a",
        "testing.probe",
        base={"size": 4},
        grid={"x": [1.0, 2.0, 3.0], "mode": ["ok", "raise"]},
        seeds=[0, 1],
    )
    runs = sweep.expand()
    assert len(runs) == 3 * 2 * 2
    assert len({r.run_id for r in runs}) == len(runs)
    assert {(r.config.x, r.config.mode, r.config.seed) for r in runs} == {
        (x, m, s) for x in (1.0, 2.0, 3.0) for m in ("ok", "raise") for s in (0, 1)
    }
    assert all(isinstance(r.config, ProbeConfig) and r.config.size == 4 for r in runs)
    assert all(r.study == "s" and r.sweep == "s/a" and r.seed == r.config.seed for r in runs)
    # ids depend on the resolved config only, not on the sweep that asked for it
    other = Sweep("t/b", "testing.probe", base={"size": 4, "x": 2.0, "mode": "raise"}, seeds=[1])
    (same,) = other.expand()
    assert same.run_id in {r.run_id for r in runs}


def test_random_samples_are_deterministic_and_in_range():
    spec = dict(
        job="testing.probe",
        random={
            "x": {"log_uniform": [1e-4, 5e-4]},
            "sleep_s": {"uniform": [0, 0.4]},
            "size": {"int_uniform": [2, 5]},
            "mode": {"choice": ["ok", "sleep"]},
        },
        samples=20,
        seeds=[0, 1],
    )
    a, b = Sweep("r", **spec).expand(), Sweep("r", **spec).expand()
    assert [r.run_id for r in a] == [r.run_id for r in b]
    assert len(a) == 40
    assert all(
        1e-4 <= r.config.x <= 5e-4 and 0 <= r.config.sleep_s <= 0.4 and 2 <= r.config.size <= 5
        for r in a
    )
    assert len({r.config.x for r in a}) == 20  # 20 distinct draws, each with 2 seeds
    assert [r.run_id for r in Sweep("r2", **spec).expand()] != [
        r.run_id for r in a
    ]  # seeded by name


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(base={"sizee": 3}), ["sizee", "did you mean 'size'"]),
        (dict(base={"size": "big"}), ["size", "'big'", "int"]),
        (dict(grid={"x": []}), ["grid.x", "empty"]),
        (dict(grid={"y": [1]}), ["'y'", "allowed"]),
        (dict(grid={"x": 1.0}), ["grid.x", "list"]),
        (dict(grid={"mode": ["ok", "explode"]}), ["mode", "'explode'"]),
        (dict(random={"x": {"normal": [0, 1]}}, samples=2), ["normal", "uniform"]),
        (dict(random={"x": {"uniform": [0, 1]}}), ["samples"]),
        (dict(seeds=[]), ["seeds"]),
        (dict(job="no.such.job"), ["no.such.job", "testing.probe"]),
    ],
)
def test_bad_sweeps_fail_before_anything_runs(kwargs, words):
    kwargs = {"job": "testing.probe", **kwargs}
    with pytest.raises(UserError) as info:
        Sweep("bad", **kwargs).expand()
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_load_sweep_yaml_and_overrides(tmp_path: Path):
    path = tmp_path / "sw.yaml"
    path.write_text(
        "name: demo/x\njob: testing.probe\nbase: {size: 3}\ngrid:\n  x: [1.0, 2.0]\nseeds: [0, 1, 2]\n"
    )
    sweep = load_sweep(path, ["size=5", "grid.mode=[ok, diverge]", "seeds=[7]"])
    runs = sweep.expand()
    assert sweep.name == "demo/x" and sweep.study == "demo"
    assert len(runs) == 2 * 2 * 1
    assert {r.config.size for r in runs} == {5} and {r.config.seed for r in runs} == {7}
    # an explicit value replaces a grid axis on the same field
    assert {r.config.x for r in load_sweep(path, ["x=3.0"]).expand()} == {3.0}
    with pytest.raises(UserError, match="did you mean 'size'"):
        load_sweep(path, ["sise=5"])
    with pytest.raises(UserError, match="did you mean 'size'"):
        load_sweep(path, ["grid.sise=[5]"])
    path.write_text("job: testing.probe\ngird: {x: [1]}\n")
    with pytest.raises(UserError, match=r"unknown key 'gird'.*did you mean 'grid'"):
        load_sweep(path)
    path.write_text("base: {}\n")
    with pytest.raises(UserError, match="missing 'job'"):
        load_sweep(path)


def test_shipped_sweep_files_are_valid():
    root = Path(__file__).resolve().parents[1] / "configs" / "sweeps"
    files = sorted(root.glob("*.yaml"))
    assert files
    for path in files:
        sweep = load_sweep(path)
        try:
            get_job(sweep.job)
        except UserError:
            continue  # the job's module is not written yet
        assert sweep.expand(), path


def test_seed_also_gives_each_unit_its_own_data_seed(tmp_path: Path):
    base = {"task": {"name": "boolean", "function": "parity", "n": 4}, "save_model": False}
    sweep = Sweep("s/u", "train", base=base, grid={"train.freeze": ["full", "embeddings"]},
                  seeds=[3, 5], seed_also=["data_seed"])  # fmt: skip
    runs = sweep.expand()
    # every run's data seed is its unit's seed; the grid is crossed with the units as before
    assert sorted((r.seed, r.config.seed, r.config.data_seed) for r in runs) == [
        (3, 3, 3), (3, 3, 3), (5, 5, 5), (5, 5, 5)
    ]  # fmt: skip
    # without seed_also the data seed stays the base's (the ids of sweeps without it are unchanged)
    plain = Sweep(
        "s/u", "train", base=base, grid={"train.freeze": ["full", "embeddings"]}, seeds=[3, 5]
    )
    assert {r.config.data_seed for r in plain.expand()} == {0}
    assert {r.run_id for r in runs}.isdisjoint(r.run_id for r in plain.expand())
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s/u\njob: train\nbase: {task: {n: 4}}\nseeds: [1, 2]\nseed_also: [data_seed]\n"
    )
    assert [r.config.data_seed for r in load_sweep(path).expand()] == [1, 2]
    for bad, words in [
        (["nope"], "nope"),
        (["seed"], "also the seed_key"),
        ("data_seed", "give a list"),
    ]:
        with pytest.raises(UserError, match=words):
            Sweep("s/u", "train", base=base, seeds=[1], seed_also=bad).expand()  # type: ignore[arg-type]


# -- the seed fields are set by the seeds alone (#32) -------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"grid": {"seed": [1, 2, 3]}}, ["grid", "seeds: [1, 2, 3]"]),
        ({"zip": {"seed": [1, 2], "x": [1.0, 2.0]}}, ["zip", "seeds: [1, 2]"]),
        ({"random": {"seed": {"int_uniform": [1, 9]}}, "samples": 2}, ["random", "seed_key: ''"]),
        ({"base": {"seed": 5}}, ["base", "seeds: [5]"]),
        ({"seeds": [2**64]}, ["18446744073709551616", "0..9223372036854775807"]),
        ({"seeds": [0, -1]}, ["seed -1"]),
    ],
)
def test_a_seed_given_anywhere_but_seeds_is_refused(kwargs, words):
    with pytest.raises(UserError) as err:
        Sweep("t/seeds", "testing.probe", **kwargs).expand()
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_seeds_as_a_list_and_a_drawn_seed_without_seed_key_still_expand():
    assert [s.seed for s in Sweep("t/s", "testing.probe", seeds=[1, 2, 3]).expand()] == [1, 2, 3]
    drawn = Sweep(
        "t/d", "testing.probe", random={"seed": {"int_uniform": [1, 9]}}, samples=3, seed_key=""
    ).expand()
    assert len(drawn) >= 1 and all(1 <= s.config.seed <= 9 for s in drawn)
    assert [s.seed for s in Sweep("t/m", "testing.probe", seeds=[2**63 - 1]).expand()] == [
        2**63 - 1
    ]


def test_the_run_limit_holds_for_a_whole_command():
    from learnability.sweep.spec import MAX_RUNS, check_run_count

    check_run_count(MAX_RUNS, "study 'x'")
    with pytest.raises(UserError, match="1,188,000 runs"):
        check_run_count(12 * 99_000, "study 'x'", "all their sweeps")
