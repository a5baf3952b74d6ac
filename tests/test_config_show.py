"""`learnability config show JOB`: every key of every job's config, with type, default, range, help."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from cli_run import run_cli
from learnability.config import describe
from learnability.sweep.jobs import get_job, known_jobs


def _paths(cls: type, prefix: str = "") -> set[str]:
    """Every leaf key of a config dataclass, walked here independently of `describe`."""
    out: set[str] = set()
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        args = (
            typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, type(int | str)) else ()
        )
        members = [a for a in (args or (tp,)) if dataclasses.is_dataclass(a)]
        if members:
            for m in members:
                out |= _paths(m, f"{prefix}{f.name}.")
        else:
            out.add(f"{prefix}{f.name}")
    return out


@pytest.mark.parametrize("job", known_jobs())
def test_every_field_of_every_job_is_listed(job):
    cls = get_job(job).config_cls
    keys = describe(cls)
    assert {k.key for k in keys} == _paths(cls)
    assert all(k.type for k in keys)


def test_every_key_of_the_train_job_has_help_and_its_real_default():
    keys = {(k.variant, k.key): k for k in describe(get_job("train").config_cls)}
    missing = [key for key, k in keys.items() if not k.help]
    assert not missing, f"keys without a help line (add a comment at the field): {missing}"
    plain = {key: k for (variant, key), k in keys.items() if not variant}
    assert plain["train.lr"].default == 3e-4 and plain["train.lr"].type == "float"
    assert plain["train.freeze"].default == "full" and plain["seed"].default == 0
    assert keys[("model.arch=two_head", "model.m")].default == 16


def test_ranges_are_what_the_checks_refuse():
    keys = {(k.variant, k.key): k.range for k in describe(get_job("train").config_cls)}
    boolean, bt = "task.name=boolean (default)", "model.arch=boolean_transformer (default)"
    assert keys[("", "train.steps")] == "an integer ≥ 0"
    assert keys[("", "train.min_lr_ratio")] == "a finite number in [0, 1]"
    assert keys[("", "train.grad_clip")] == "a finite number > 0, or null"
    assert keys[("", "seed")] == f"an integer in 0..{2**63 - 1}"
    assert keys[("", "device")] == "allowed: auto, cpu, cuda, cuda:N"
    assert keys[("", "pca_ks")] == "an integer ≥ 1"
    assert keys[(boolean, "task.n")] == "an integer in 1..4096"
    assert keys[(bt, "model.dropout")] == "in [0, 1)"
    assert keys[("", "train.optimizer")] == ""  # a Literal: the type lists the choices


def test_config_show_prints_every_key(capsys):
    code, out, _ = run_cli(["config", "show", "train", "--json"], capsys)
    rows = json.loads(out)
    assert code == 0 and {r["key"] for r in rows} == _paths(get_job("train").config_cls)
    code, out, _ = run_cli(["config", "show", "train", "--key", "train"], capsys)
    assert code == 0 and "train.lr" in out and "task.n" not in out
    assert "float = 0.0003  (a finite number ≥ 0)  # learning rate" in out
    code, out, _ = run_cli(["config", "show"], capsys)
    assert code == 0 and all(job in out for job in known_jobs())


def test_config_show_errors(capsys):
    code, _, err = run_cli(["config", "show", "trian"], capsys)
    assert code == 2 and "did you mean 'train'" in err
    code, _, err = run_cli(["config", "show", "train", "--key", "modle"], capsys)
    assert code == 2 and "names no key of train" in err
