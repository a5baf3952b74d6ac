"""Paired (zipped) sweep axes, and the sweep's name as its study label."""

from __future__ import annotations

from pathlib import Path

import pytest

from learnability.errors import UserError
from learnability.sweep import Sweep, load_sweep

BASE = {"task": {"function": "parity", "n": 4}, "train": {"steps": 1}, "save_model": False}


def _settings(specs):
    return [(s.config.task.n, s.config.train.freeze, s.config.train.lr, s.seed) for s in specs]


def test_zip_reads_its_lists_in_lockstep_crossed_with_grid_and_seeds():
    sweep = Sweep(
        name="demo/zip",
        job="train",
        base=BASE,
        grid={"task.n": [4, 6]},
        zip={"train.freeze": ["embeddings", "full"], "train.lr": [1e-2, 1e-3]},
        seeds=[0, 1],
    )
    specs = sweep.expand()
    assert sweep.size() == 8 and len(specs) == 8
    assert _settings(specs) == [
        (n, freeze, lr, seed)
        for n in (4, 6)
        for freeze, lr in (("embeddings", 1e-2), ("full", 1e-3))
        for seed in (0, 1)
    ]
    assert len({s.run_id for s in specs}) == 8


def test_zip_groups_are_crossed_with_each_other():
    sweep = Sweep(
        name="demo/zip2",
        job="train",
        base=BASE,
        zip=[
            {"train.freeze": ["embeddings", "full"], "train.lr": [1e-2, 1e-3]},
            {"task.n": [4, 5, 6], "task.test_size": [16, 32, 64]},
        ],
    )
    specs = sweep.expand()
    assert len(specs) == sweep.size() == 6
    assert {(s.config.task.n, s.config.task.test_size) for s in specs} == {
        (4, 16),
        (5, 32),
        (6, 64),
    }
    assert {(s.config.train.freeze, s.config.train.lr) for s in specs} == {
        ("embeddings", 1e-2),
        ("full", 1e-3),
    }


def test_a_zip_of_one_axis_is_a_grid_axis_with_the_same_ids():
    grid = Sweep(name="demo/a", job="train", base=BASE, grid={"task.n": [4, 5]}, seeds=[0, 3])
    zipped = Sweep(name="demo/a", job="train", base=BASE, zip={"task.n": [4, 5]}, seeds=[0, 3])
    assert [s.run_id for s in grid.expand()] == [s.run_id for s in zipped.expand()]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"zip": {"train.lr": [1e-2, 1e-3], "train.freeze": ["full"]}}, "must have one length"),
        ({"zip": {"train.lr": []}}, "zip.train.lr is empty"),
        ({"zip": {"train.lr": 0.1}}, "must be a list of values"),
        ({"zip": {"train.lrr": [0.1]}}, "no field 'lrr' in 'train' (did you mean 'lr'?)"),
        ({"zip": {"task.n": [4]}, "grid": {"task.n": [5]}}, "both a grid axis and a zip axis"),
        ({"zip": [{"task.n": [4]}, {"task.n": [5]}]}, "in two zip groups"),
        ({"zip": [{}]}, "zip[0] is empty"),
        ({"zip": "train.lr"}, "zip must be a mapping"),
    ],
)
def test_bad_zips_fail_before_anything_runs(kwargs, words):
    with pytest.raises(UserError) as info:
        Sweep(name="demo/bad", job="train", base=BASE, **kwargs).expand()
    assert words in str(info.value)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


def test_zip_in_yaml_and_overrides(tmp_path: Path):
    path = _write(
        tmp_path,
        "name: demo/pairs\njob: train\nbase: {task: {function: parity, n: 4}, train: {steps: 1}}\n"
        "zip: {train.freeze: [embeddings, full], train.lr: [1.0e-2, 1.0e-3]}\n",
    )
    sweep = load_sweep(path)
    assert [(s.config.train.freeze, s.config.train.lr) for s in sweep.expand()] == [
        ("embeddings", 1e-2),
        ("full", 1e-3),
    ]
    # an axis replaced on the command line; a mismatch made there is caught like one in the file
    assert load_sweep(path, ["zip.train.lr=[0.5, 0.25]"]).expand()[1].config.train.lr == 0.25
    with pytest.raises(
        UserError, match=r"must have one length; train.freeze has 2, train.lr has 3"
    ):
        load_sweep(path, ["zip.train.lr=[1, 2, 3]"]).expand()
    # a plain value wins over the zip axis on that field, and the other axis stays paired
    fixed = load_sweep(path, ["train.lr=0.125"]).expand()
    assert [(s.config.train.freeze, s.config.train.lr) for s in fixed] == [
        ("embeddings", 0.125),
        ("full", 0.125),
    ]
    # a grid override on a zipped field moves it out of the zip
    moved = load_sweep(path, ["grid.train.lr=[0.5, 0.25, 0.125]"])
    assert moved.zip == {"train.freeze": ["embeddings", "full"]} and len(moved.expand()) == 6


def test_name_override_relabels_the_sweep(tmp_path: Path):
    path = _write(tmp_path, "name: demo/parity\njob: train\nbase: {task: {n: 4}}\n")
    assert load_sweep(path).study == "demo"
    renamed = load_sweep(path, ["name=mine/parity_long"])
    assert (renamed.name, renamed.study) == ("mine/parity_long", "mine")
    assert all(s.study == "mine" for s in renamed.expand())
    assert load_sweep(path, ["name=flat"]).study == ""  # no "/": no study label
    # an explicit label is the user's choice: renaming keeps it, in either order
    assert load_sweep(path, ["study=lab", "name=mine/x"]).study == "lab"
    assert load_sweep(path, ["name=mine/x", "study=lab"]).study == "lab"
    labelled = _write(tmp_path, "name: demo/parity\nstudy: lab\njob: train\nbase: {}\n")
    assert load_sweep(labelled, ["name=mine/x"]).study == "lab"
