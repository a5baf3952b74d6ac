"""Custom Boolean functions by reference, `py:package.module:fn`: evaluated at any n, checked, refused
with one line when the module, the name or the output is wrong."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from learnability.boolean import profile, resolve_function
from learnability.boolean.functions import all_inputs
from learnability.config import from_dict
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig, run_train
from learnability.sweep.spec import Sweep

MODULE = """
import numpy as np

def ends(x):                      # x_0 AND x_{n-1}, at every n
    return x[:, 0] & x[:, -1]

def as_bool(x):
    return x.sum(1) >= 2

def bad_shape(x):
    return x

def bad_value(x):
    return x.sum(1)

def boom(x):
    raise ValueError("nope")

def text(x):
    return np.array(["a"] * len(x))

LIMIT = 3
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    package = tmp_path / "userfns"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "boolean.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "userfns.boolean"
    for name in ("userfns", "userfns.boolean"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("n", [2, 3, 7, 11])
def test_a_referenced_function_is_evaluated_at_any_n(user_module, n):
    f = resolve_function(f"py:{user_module}:ends", n)
    x = all_inputs(n)
    assert f.n == n
    np.testing.assert_array_equal(f.truth_table(), x[:, 0] & x[:, n - 1])
    # AND of two bits: each is sensitive exactly when the other is 1, so as = 2 · ½ = 1 at every n
    assert profile(f).average == pytest.approx(1.0)


def test_boolean_outputs_are_accepted_as_0_1(user_module):
    f = resolve_function(f"py:{user_module}:as_bool", 4)
    assert f.truth_table().tolist() == [int(bin(i).count("1") >= 2) for i in range(16)]


def test_a_sweep_over_n_trains_on_the_referenced_function(user_module):
    sweep = Sweep(
        name="demo/custom",
        job="train",
        base={
            "task": {"function": f"py:{user_module}:ends", "test_size": 64},
            "model": {"n_layers": 1, "d_model": 8, "d_ff": 8},
            "train": {"steps": 2, "eval_every": 1},
            "save_model": False,
        },
        grid={"task.n": [4, 9]},
    )
    specs = sweep.expand()
    assert [s.config.task.n for s in specs] == [4, 9]
    for spec in specs:
        metrics = run_train(spec.config)
        assert metrics["target_as"] == pytest.approx(1.0)  # the target's own profile, exact
        assert metrics["target_degree"] == 2


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        ("bad_shape", r"returned shape \(32, 5\) for a \(32, 5\) batch"),
        ("bad_value", r"returned 2; a Boolean function's values must be 0 or 1"),
        ("boom", r"raised ValueError on a \(32, 5\) 0/1 batch: nope"),
        ("text", r"returned values of type <U1"),
        ("LIMIT", r"is not callable \(its type is int\)"),
        ("endz", r"has no 'endz' \(did you mean 'ends'\?\)"),
    ],
)
def test_wrong_functions_are_one_line_errors_at_the_spec(user_module, fn, message):
    with pytest.raises(UserError, match=message):
        resolve_function(f"py:{user_module}:{fn}", 5)


def test_a_task_config_with_a_broken_reference_fails_when_built(user_module):
    with pytest.raises(UserError, match=r"task.function='py:.*:bad_value'"):
        from_dict(TrainJobConfig, {"task": {"function": f"py:{user_module}:bad_value", "n": 6}})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("py:no_such_module_xyz:f", r"module 'no_such_module_xyz' cannot be imported"),
        ("py:no_such_module_xyz", r"is not of the form py:package.module:function"),
        ("py:a b:f", r"is not of the form"),
    ],
)
def test_bad_references_name_what_is_wrong(spec, message):
    with pytest.raises(UserError, match=message):
        resolve_function(spec, 5)


def test_a_module_that_fails_on_import_is_reported(tmp_path, monkeypatch):
    (tmp_path / "broken_user_mod.py").write_text("import not_installed_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UserError, match="importing 'broken_user_mod' failed: ModuleNotFoundError"):
        resolve_function("py:broken_user_mod:f", 3)


def test_the_current_folder_is_searched_after_the_import_path(tmp_path, monkeypatch):
    (tmp_path / "here_only_mod.py").write_text("def f(x):\n    return x[:, 0]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    f = resolve_function("py:here_only_mod:f", 3)
    assert f.truth_table().tolist() == [0, 1, 0, 1, 0, 1, 0, 1]  # x_0 is the low bit of the index
    assert sys.path[-1] == str(tmp_path)  # appended: installed packages still win
    sys.modules.pop("here_only_mod", None)


def test_sys_exit_in_a_py_module_or_function_is_a_user_error_and_ctrl_c_is_not(
    tmp_path, monkeypatch
):
    # (#32) SystemExit from the user's code ended the command with exit 0 and no output
    (tmp_path / "exiting_at_import_mod.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "exiting_fn_mod.py").write_text(
        "import sys\ndef f(x):\n    sys.exit(5)\ndef g(x):\n    raise KeyboardInterrupt\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UserError, match=r"importing 'exiting_at_import_mod' called sys.exit\(0\)"):
        resolve_function("py:exiting_at_import_mod:f", 4)
    with pytest.raises(UserError, match=r"'py:exiting_fn_mod:f' called sys.exit\(5\)"):
        resolve_function("py:exiting_fn_mod:f", 4)
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C stays Ctrl-C (exit 130)
        resolve_function("py:exiting_fn_mod:g", 4)
