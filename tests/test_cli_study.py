"""`learnability study run FILE` and `report --study-file`: the guide's example, copied out of
docs/STUDIES.md into a folder outside the package, runs at its tiny scale and gives real verdicts; a
study folder with relative imports loads; every kind of bad study file is one line and exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_run import run_cli

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "STUDIES.md"


def guide_example() -> str:
    """The code block that follows the `<!-- example: ... -->` marker in docs/STUDIES.md."""
    text = GUIDE.read_text()
    found = re.search(r"<!-- example: (\S+) -->\n```python\n(.*?)```", text, re.S)
    assert found, "docs/STUDIES.md has no marked example"
    return found.group(2)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory) -> tuple[Path, Path, int, str]:
    """The guide's example run once at its tiny scale, from a folder outside the package."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("my_question")
    study = folder / "low_sensitivity.py"
    study.write_text(guide_example())
    results = folder / "results"
    # a separate process: what a researcher types, with nothing of the test suite imported
    cmd = [sys.executable, "-c", "from learnability.cli import main; main()", "study", "run", str(study),
           "--scale", "tiny", "--workers", "0", "--results", str(results)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, timeout=600)
    return study, results, done.returncode, done.stdout + done.stderr


def test_the_guide_example_is_short_and_written_outside_the_package() -> None:
    code = guide_example()
    assert len(code.splitlines()) < 100
    assert "STUDY = Study(" in code and "from learnability.studies import" in code
    # the one layout: its sections are the built-in studies' module names, in order
    sections = re.findall(r"^# -- (\w+)", code, re.M)
    assert sections == ["plan", "sweeps", "evidence", "claims", "exhibits"]


def test_the_guide_example_runs_and_gives_real_verdicts(example_run) -> None:
    _, results, code, output = example_run
    assert code == 0, output
    report = results / "report"
    assert (report / "report.html").is_file() and (report / "claims.md").is_file()
    assert (report / "figures" / "low_sensitivity_learned.png").is_file() or any(
        (report / "figures").glob("*learned*.png")
    )
    (claim,) = json.loads((report / "claims.json").read_text())
    assert claim["id"] == "low_sensitivity/majority-beats-parity" and claim["scale"] == "tiny"
    # MAJORITY (sensitivity ~√n) is learned by every seed in 200 steps at n = 7; PARITY by none:
    # every PARITY model stays at chance agreement
    assert claim["verdict"] == "reproduced"
    rule = claim["details"]["rule"]
    assert rule["paired"] is True and claim["units"] == {
        "kind": "seed", "count": 4, "min_per_cell": 3,
        "note": "a seed fixes the initial weights and the data order",
    }  # fmt: skip
    assert rule["focus"]["value"] == 1.0 and rule["control"]["value"] == 0.0
    # the interval clears the band's edge (0.25): the verdict is not a rounding accident
    assert rule["difference"]["lo"] > 0.25
    assert "MAJORITY 4/4, PARITY 0/4" in claim["measured"]
    assert claim["control"] == {
        "name": "PARITY through the same pipeline, budget and seeds",
        "value": "PARITY: 0 [0, 0.49] (n=4)",
    }
    assert [r["alternative"] for r in claim["robustness"]] == ["learned_at=0.95"]
    # every agreement is 1.0 or ~0.5, so the stricter threshold changes no observation: the
    # alternative is a no-op and the verdict's robustness is untested, not "robust"
    assert claim["robustness"][0]["effect"] == "no-op"
    assert claim["robust"] is None
    assert claim["scale_note"] == "smoke test: one n"
    assert "lies above 0.25" in claim["rule"]["text"]


def test_report_reads_a_study_files_runs_again(example_run, tmp_path, capsys) -> None:
    study, results, code, _ = example_run
    assert code == 0
    out = tmp_path / "again"
    code, _, err = run_cli(
        ["report", "--results", results, "--study-file", study, "--out", out], capsys
    )
    assert code == 0, err
    (claim,) = json.loads((out / "claims.json").read_text())
    # judged again from the store alone, at the scale whose runs it holds
    assert claim["verdict"] == "reproduced" and claim["scale"] == "tiny"
    code, _, err = run_cli(
        ["report", "--results", results, "--study-file", study, "--scale", "huge"], capsys
    )
    assert code == 2 and "'huge'" in err and "tiny" in err


def test_study_power_resamples_the_pilots_units(example_run, capsys) -> None:
    study, results, code, _ = example_run
    assert code == 0
    argv = ["study", "power", study, "majority-beats-parity", "--results", results, "--draws", "60"]
    code, out, err = run_cli([*argv, "--units", "2,4"], capsys)
    assert code == 0, err
    # 4 seeds in the pilot, MAJORITY learned by every one and PARITY by none: any 4 drawn decide, and
    # 2 are below the claim's 3 per cell, so they never do
    assert "from the pilot's 4 in" in out
    assert "    2: inconclusive 100.0%" in out and "    4: reproduced 100.0%" in out
    code, _, err = run_cli([*argv, "--units", "1"], capsys)
    assert code == 2 and "--units '1'" in err and "2..10,000" in err
    code, _, err = run_cli([*argv, "--units", "2,100000000"], capsys)  # (it ran on for hours)
    assert code == 2 and "2..10,000" in err
    code, _, err = run_cli([*argv, "--units", "10000,10000", "--draws", "100000"], capsys)
    assert code == 2 and "2,000,000,000" in err and "100,000,000" in err
    code, _, err = run_cli(["study", "power", study, "no-such-claim", "--results", results], capsys)
    assert code == 2 and "'no-such-claim'" in err and "majority-beats-parity" in err


def test_a_study_folder_with_relative_imports_loads(tmp_path, capsys) -> None:
    pkg = tmp_path / "probe_study"
    pkg.mkdir()
    (pkg / "plan.py").write_text(
        "from learnability.studies import Plan\nPLANS = {'quick': Plan('quick', {'xs': [1.0, 2.0]})}\n"
    )
    (pkg / "sweeps.py").write_text(
        "from learnability.studies import Sweep\n"
        "def sweeps(plan):\n"
        "    return [Sweep('probe_study/probe', 'testing.probe', grid={'x': plan.params['xs']}, seeds=[0, 1])]\n"
    )
    (pkg / "__init__.py").write_text(
        "from learnability.studies import Study\nfrom .plan import PLANS\nfrom .sweeps import sweeps\n"
        "STUDY = Study('probe_study', 'probe', 'nobody', 'test', PLANS, sweeps, lambda plan: [])\n"
    )
    code, out, err = run_cli(["study", "run", pkg, "--dry-run"], capsys)
    assert code == 0, err
    assert "study 'probe_study', scale 'quick': 4 runs; 0 claims" in out


GOOD_TAIL = (
    "from learnability.studies import Plan, Study, Sweep\n"
    "def sweeps(plan):\n"
    "    return [Sweep('{sweep}', 'testing.probe', grid={{'x': [1.0]}})]\n"
    "STUDY = Study('{name}', 't', 'p', 'n', {{'quick': Plan('quick', None)}}, sweeps, lambda p: [])\n"
)


@pytest.mark.parametrize(
    "text, words",
    [
        (None, ["does not exist"]),
        ("x = (\n", ["syntax error", "line 1", "never closed"]),
        ("import os\n", ["defines no STUDY"]),
        ("STUDY = 3\n", ["STUDY is of type 'int'", "not a learnability.studies.Study"]),
        ("def f():\n    return 1 / 0\n\nf()\n", ["failed while importing", "line 2", "ZeroDivisionError"]),
        (GOOD_TAIL.format(sweep="other/probe", name="mine"), ["sweep 'other/probe'", "'mine/<short name>'"]),
        (GOOD_TAIL.format(sweep="volume/probe", name="volume"), ["'volume' is a built-in study's"]),
        (GOOD_TAIL.format(sweep="a b/probe", name="a b"), ["study name 'a b'"]),
        (GOOD_TAIL.format(sweep="mine/probe", name="mine").replace("lambda p: []", "lambda p: [1 / 0]"),
         ["claims(plan) failed at scale 'quick'", "question.py, line 4", "ZeroDivisionError"]),
        (GOOD_TAIL.format(sweep="mine/probe", name="mine").replace("lambda p: []", "lambda p: ['x']"),
         ["claims(plan) must return a list of Claim, got ['str']"]),
    ],
)  # fmt: skip
def test_a_bad_study_file_is_one_line_and_exit_2(tmp_path, capsys, text, words) -> None:
    path = tmp_path / "question.py"
    if text is not None:
        path.write_text(text)
    code, _, err = run_cli(["study", "run", path, "--dry-run"], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)
    code, _, err = run_cli(["study", "run", tmp_path / "question.txt"], capsys)
    assert code == 2 and "does not exist" in err


def test_a_scale_the_study_lacks_is_refused_before_anything_runs(tmp_path, capsys) -> None:
    path = tmp_path / "question.py"
    path.write_text(GOOD_TAIL.format(sweep="mine/probe", name="mine"))
    code, _, err = run_cli(
        ["study", "run", path, "--scale", "paper", "--results", tmp_path / "r"], capsys
    )
    assert code == 2 and "'paper'" in err and "quick" in err
    assert not (tmp_path / "r").exists()


# -- a study file's own job runs in worker processes (#35) ---------------------------------------------
OWN_JOB = """\
from dataclasses import dataclass

from learnability.studies import Plan, Study, Sweep
from learnability.sweep.jobs import register_job


@dataclass
class SquareConfig:
    x: float = 1.0
    seed: int = 0


@register_job("{name}.square", SquareConfig)
def square(config, ctx):
    return {{"y": config.x * config.x + config.seed}}


def sweeps(plan):
    return [Sweep("{name}/square", "{name}.square", grid={{"x": [1.0, 2.0, 3.0]}}, seeds=[0, 1])]


STUDY = Study("{name}", "own job", "p", "n", {{"quick": Plan("quick", None)}}, sweeps, lambda p: [])
"""


def _own_job_runs(tmp_path: Path, capsys, name: str, backend: list[str]) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(OWN_JOB.format(name=name))
    results = tmp_path / "r"
    code, out, err = run_cli(["study", "run", path, "--results", results, *backend], capsys)
    assert code == 0, out + err
    from learnability.sweep.store import open_existing

    with open_existing(results) as store:
        records = store.records(study=name)
    # every run ran the study file's own job in a worker, which imported the file by its name
    assert sorted((r.status, r.config["x"], r.seed, r.metrics.get("y")) for r in records) == [
        ("ok", x, seed, x * x + seed) for x in (1.0, 2.0, 3.0) for seed in (0, 1)
    ], [r.error for r in records]


def test_a_job_written_in_a_study_file_runs_in_local_worker_processes(tmp_path, capsys) -> None:
    _own_job_runs(tmp_path, capsys, "ownjob_local", ["--workers", "2"])


def test_a_job_written_in_a_study_file_runs_on_ray(tmp_path, capsys) -> None:
    pytest.importorskip("ray")
    from learnability.sweep.testing import LocalRayCluster

    with LocalRayCluster(num_cpus=2) as address:
        _own_job_runs(tmp_path, capsys, "ownjob_ray", ["--backend", "ray", "--address", address])


def test_a_study_file_module_name_names_its_file(tmp_path) -> None:
    import importlib

    from learnability.studies import loader

    path = tmp_path / "weird name-1.py"
    path.write_text("X = 41\n")
    name = loader._module_name(path, package=False)
    assert name.startswith("learnability.studies.loader.study_weird_name_1_f")
    assert loader._file_of(name) == (path.resolve(), False)
    assert loader._file_of("learnability.studies.loader.study_x_zz") is None
    assert importlib.import_module(name).X == 41  # what a worker process does


# -- #32: user code, figure names, bracketed text, checks before writing ------------------------------
def test_a_figure_name_that_would_leave_figures_is_a_failed_study_and_nothing_is_written_outside(
    tmp_path, capsys
) -> None:
    path = tmp_path / "fig.py"
    path.write_text(
        "from learnability.studies import Plan, Study, Sweep\n"
        "from learnability.report.panels import Figure, Panel\n"
        "def sweeps(plan):\n"
        "    return [Sweep('fig/probe', 'testing.probe', grid={'x': [1.0]})]\n"
        "def exhibits(results, plan):\n"
        "    return [Figure('../../../escaped', 'c', [Panel('t', 'x', 'y')])]\n"
        "STUDY = Study('fig', 't', 'p', 'n', {'quick': Plan('quick', None)}, sweeps,\n"
        "              lambda p: [], exhibits)\n"
    )
    code, out, _ = run_cli(
        ["study", "run", path, "--results", tmp_path / "a" / "r", "--workers", "0"], capsys
    )
    assert code == 1 and "figure name '../../../escaped' is not allowed" in " ".join(out.split())
    assert not list(tmp_path.rglob("*escaped*"))


def test_bracketed_titles_names_and_errors_are_printed_as_typed(tmp_path, capsys) -> None:
    path = tmp_path / "br.py"
    path.write_text(
        "from learnability.studies import Plan, Study, Sweep\n"
        "def sweeps(plan):\n"
        "    return [Sweep('br/[/x] probe', 'testing.probe', grid={'x': [1.0]})]\n"
        "def exhibits(results, plan):\n"
        "    raise ValueError('[/x] at [n/2]')\n"
        "STUDY = Study('br', 'title [n/2] and [/x]', 'p', 'n', {'quick': Plan('quick', None)},\n"
        "              sweeps, lambda p: [], exhibits)\n"
    )
    code, out, err = run_cli(
        ["study", "run", path, "--results", tmp_path / "r", "--workers", "0"], capsys
    )
    text = " ".join(out.split())
    # the exhibits' own error is that study's failure (exit 1), shown as typed; the report is written
    assert code == 1 and "Traceback" not in out + err, out + err
    assert "title [n/2] and [/x]" in text and "ValueError: [/x] at [n/2]" in text
    assert (tmp_path / "r" / "report" / "claims.json").exists()


def test_sys_exit_in_a_study_files_analysis_is_a_failed_study_not_a_silent_exit(
    tmp_path, capsys
) -> None:
    path = tmp_path / "ex.py"
    path.write_text(
        "import sys\n"
        "from learnability.studies import Plan, Study, Sweep\n"
        "def sweeps(plan):\n"
        "    return [Sweep('ex/probe', 'testing.probe', grid={'x': [1.0]})]\n"
        "STUDY = Study('ex', 't', 'p', 'n', {'quick': Plan('quick', None)}, sweeps,\n"
        "              lambda p: [], lambda results, plan: sys.exit(0))\n"
    )
    code, out, err = run_cli(
        ["study", "run", path, "--results", tmp_path / "r", "--workers", "0"], capsys
    )
    assert code == 1 and "its code called sys.exit(0)" in " ".join(out.split()), out + err


def test_the_dry_run_and_the_real_run_refuse_the_same_inputs(tmp_path, capsys) -> None:
    path = tmp_path / "question.py"
    path.write_text(GOOD_TAIL.format(sweep="mine/probe", name="mine"))
    afile = tmp_path / "afile"
    afile.write_text("x")
    for extra in (["--results", afile], ["--budget", "abc"], ["--budget", "-5s"]):
        dry = run_cli(["study", "run", path, "--dry-run", *extra], capsys)
        real = run_cli(["study", "run", path, "--workers", "0", *extra], capsys)
        assert dry[0] == real[0] == 2 and dry[2] == real[2], (dry, real)
