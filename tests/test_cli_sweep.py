"""`learnability sweep / results / report / reproduce` end to end, in process."""

from __future__ import annotations

import csv
import io
import json
import sys
import types
from pathlib import Path

import pytest

import learnability.studies as studies
from cli_run import run_cli
from learnability.claims import Choice, Claim, Evidence, Rate, Units, above, no_control, observe
from learnability.report.panels import Figure, Panel, mean_series
from learnability.studies.base import Plan, Study
from learnability.sweep import Sweep

GOOD = "name: cli/demo\njob: testing.probe\nbase: {size: 4}\ngrid:\n  x: [1.0, 2.0]\n  mode: [ok, raise]\nseeds: [0, 1]\n"


@pytest.mark.parametrize(
    "text, words",
    [
        (GOOD.replace("size: 4", "sise: 4"), ["sise", "did you mean 'size'"]),
        (GOOD.replace("size: 4", "size: four"), ["size", "'four'", "int"]),
        (GOOD.replace("x: [1.0, 2.0]", "x: []"), ["grid.x", "empty"]),
        (GOOD.replace("x: [1.0, 2.0]", "depth: [1, 2]"), ["depth", "allowed"]),
        (GOOD.replace("grid:", "gird:"), ["gird", "did you mean 'grid'"]),
        (
            GOOD.replace("testing.probe", "testing.prob"),
            ["testing.prob", "did you mean 'testing.probe'"],
        ),
        ("job: testing.probe\nbase: [1, 2\n", ["not valid YAML"]),
    ],
)
def test_bad_sweep_files_exit_2_and_write_nothing(tmp_path: Path, capsys, text, words):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    results = tmp_path / "results"
    code, _, err = run_cli(["sweep", path, "--results", results, "--workers", "0"], capsys)
    assert code == 2
    message = " ".join(err.split())
    assert message.startswith("error:") and "Traceback" not in err
    for word in words:
        assert word in message
    assert not results.exists()


def test_sweep_then_results_in_every_format(tmp_path: Path, capsys):
    path = tmp_path / "good.yaml"
    path.write_text(GOOD)
    results = tmp_path / "results"
    code, out, _ = run_cli(
        ["sweep", path, "size=5", "--results", results, "--workers", "0"], capsys
    )
    assert code == 0
    assert "8 runs: 4 ok, 4 failed" in " ".join(out.split())
    code, out, _ = run_cli(
        ["sweep", path, "size=5", "--results", results, "--workers", "0"], capsys
    )
    assert "8 already done" in " ".join(out.split())

    code, out, _ = run_cli(
        ["results", "--results", results, "--format", "csv", "--status", "ok"], capsys
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 4
    assert {r["config.size"] for r in rows} == {"5"} and all(
        float(r["metrics.value"]) for r in rows
    )

    code, out, _ = run_cli(
        ["results", "--results", results, "--format", "json", "--sweep", "cli/demo"], capsys
    )
    data = json.loads(out)
    assert len(data) == 8 and {d["status"] for d in data} == {"ok", "failed"}
    assert all(d["error"].startswith("RuntimeError") for d in data if d["status"] == "failed")

    pq = pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "runs.parquet"
    code, _, _ = run_cli(
        ["results", "--results", results, "--format", "parquet", "--out", target], capsys
    )
    table = pq.read_table(target)
    assert code == 0 and table.num_rows == 8 and "config.x" in table.column_names

    code, out, _ = run_cli(["results", "--results", results, "--study", "cli"], capsys)
    assert code == 0 and "run_id" in out
    code, out, _ = run_cli(
        ["results", "--results", results, "--format", "csv", "--columns", "config.x,metrics.*"],
        capsys,
    )
    header = next(csv.reader(io.StringIO(out)))
    assert code == 0 and header[0] == "run_id" and "config.x" in header
    assert all(c in ("run_id", "config.x") or c.startswith("metrics.") for c in header)
    code, _, err = run_cli(["results", "--results", results, "--columns", "nothing*"], capsys)
    assert code == 2 and "matches no column" in err
    code, _, err = run_cli(["results", "--results", results, "--study", "clj"], capsys)
    assert code == 2 and "did you mean 'cli'" in err
    code, _, err = run_cli(["results", "--results", tmp_path / "none"], capsys)
    assert code == 2 and "no results store" in err


def _fake_sweeps(plan: Plan) -> list[Sweep]:
    return [
        Sweep(
            f"{plan.params['name']}/probe",
            "testing.probe",
            grid={"x": plan.params["xs"]},
            seeds=[0, 1],
        )
    ]


def _finished(results, choices) -> Evidence:
    records = results.of("probe", status=None)
    return Evidence(
        observe(records, lambda r: float(r.status == "ok"), unit="run_id", group="runs")
    )


def _fake_claims(plan: Plan) -> list[Claim]:
    return [
        Claim(
            slug="runs-finish", title="runs finish", statement="all runs finish",
            paper_statement="all runs finish", evidence=_finished,
            rule=Rate("runs", above(0.3, 0.4), what="finished fraction"),
            units=Units("run", min_per_cell=2), control=no_control("bookkeeping"),
            choices=(Choice("status", "ok", ("any",)),),
        )
    ]  # fmt: skip


def _fake_exhibits(results, plan) -> list:
    points = [(r.config["x"], r.metrics["value"]) for r in results.of("probe")]
    return [
        Figure(
            "values", "probe values", [Panel("values", "x", "value", series=[mean_series(points)])]
        )
    ]


def _fake_study(name: str, exhibits=_fake_exhibits) -> Study:
    plans = {
        "quick": Plan("quick", {"name": name, "xs": [1.0, 2.0]}),
        "paper": Plan("paper", {"name": name, "xs": [1.0, 2.0, 3.0]}),
    }
    return Study(name, "A fake study" if name == "fake" else "broken", "Nobody (2026)", "test protocol",
                 plans, _fake_sweeps, _fake_claims, exhibits)  # fmt: skip


def _broken_exhibits(results, plan) -> list:
    raise ZeroDivisionError("analysis bug")


@pytest.fixture
def fake_studies(monkeypatch):
    for name, study in (
        ("fake", _fake_study("fake")),
        ("broken", _fake_study("broken", _broken_exhibits)),
    ):
        module = types.ModuleType(f"_test_study_{name}")
        module.STUDY = study
        monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(
        studies, "_MODULES", {"fake": "_test_study_fake", "broken": "_test_study_broken"}
    )


def test_reproduce_and_report(tmp_path: Path, capsys, fake_studies):
    results = tmp_path / "results"
    code, out, _ = run_cli(["reproduce", "--results", results, "--workers", "0"], capsys)
    text = " ".join(out.split())
    assert code == 1  # one study's analysis failed; the other is still reported
    assert (
        "cost estimate (quick): 4 runs" in text
        and "broken failed" in text
        and "analysis bug" in text
    )
    html = results / "report" / "report.html"
    # (report.html is a link into the report's current set: the link's own path is printed)
    assert html.is_file() and str(html.parent.resolve() / html.name) in out.replace("\n", "")
    page = html.read_text()
    assert "A fake study" in page and "analysis bug" in page
    assert (results / "report" / "figures" / "fake_values.png").is_file()
    assert (results / "report" / "figures" / "fake_values.pdf").is_file()

    # report again from the store alone, into another folder, only the good study
    code, out, _ = run_cli(
        ["report", "--results", results, "--study", "fake", "--out", tmp_path / "rep"], capsys
    )
    assert code == 0 and (tmp_path / "rep" / "report.html").is_file()
    claims = json.loads((tmp_path / "rep" / "claims.json").read_text())
    assert [(c["id"], c["verdict"], c["scale"]) for c in claims] == [
        ("fake/runs-finish", "reproduced", "quick")
    ]
    assert claims[0]["measured"].startswith("runs: finished fraction 4/4")
    code, _, err = run_cli(["reproduce", "--study", "nope", "--results", results], capsys)
    assert code == 2 and "unknown study 'nope'" in err
    code, _, err = run_cli(["reproduce", "--scale", "huge", "--results", results], capsys)
    assert code == 2 and "unknown scale 'huge'" in err


def test_a_report_of_an_incomplete_study_says_so(tmp_path: Path, capsys, fake_studies):
    # an interrupted reproduce: some of the plan's runs never reached the store
    results = tmp_path / "results"
    code, _, err = run_cli(
        ["reproduce", "--study", "fake", "--results", results, "--workers", "0"], capsys
    )
    assert code == 0 and "warning" not in err  # complete: no warning
    import sqlite3

    with sqlite3.connect(results / "learnability.db") as conn:
        conn.execute("DELETE FROM runs WHERE rowid IN (SELECT rowid FROM runs LIMIT 3)")
    conn.close()
    code, _, err = run_cli(["report", "--results", results, "--study", "fake"], capsys)
    assert code == 0
    warning = " ".join(err.split())
    assert warning.startswith("warning: study 'fake' is incomplete: 1 of its 4 quick runs")
    assert "learnability reproduce --study fake --scale quick" in warning
    page = (results / "report" / "report.html").read_text()
    assert "incomplete: 1 of 4 planned runs stored" in page  # the study's headline says so too

    from learnability.studies import get_study
    from learnability.studies.pipeline import analyse_study
    from learnability.sweep.store import open_existing

    with open_existing(results) as store:
        report = analyse_study(get_study("fake"), store, "quick", tmp_path / "rep")
    assert (report.runs_expected, report.runs_stored, report.incomplete) == (4, 1, True)


def test_reproduce_dry_run_counts_and_checks_every_run_and_writes_nothing(
    tmp_path: Path, capsys, fake_studies
):
    results = tmp_path / "results"
    for scale, runs in (("quick", 4), ("paper", 6)):
        code, out, err = run_cli(
            ["reproduce", "--study", "fake", "--scale", scale, "--dry-run", "--results", results],
            capsys,
        )
        assert code == 0, err
        assert f"fake ({scale}): {runs} runs" in out and "nothing run or written" in out
    assert not results.exists()
    run_cli(["reproduce", "--study", "fake", "--results", results, "--workers", "0"], capsys)
    listing = sorted(p.name for p in results.rglob("*"))
    code, out, _ = run_cli(
        ["reproduce", "--study", "fake", "--scale", "paper", "--dry-run", "--results", results],
        capsys,
    )
    assert code == 0 and "fake (paper): 6 runs, 4 finished in the store" in " ".join(out.split())
    assert sorted(p.name for p in results.rglob("*")) == listing  # the store only read


def test_reproduce_dry_run_of_a_real_paper_plan(tmp_path: Path, capsys):
    from learnability.studies import get_study
    from learnability.studies.pipeline import run_ids

    study = get_study("sparse_xor")
    expected = len(run_ids(study, "paper"))
    code, out, err = run_cli(
        ["reproduce", "--study", "sparse_xor", "--scale", "paper", "--dry-run",
         "--results", tmp_path / "r"], capsys,
    )  # fmt: skip
    text = " ".join(out.split())
    assert code == 0, err
    assert f"sparse_xor (paper): {expected} runs; {study.plan('paper').cost}" in text
    assert not (tmp_path / "r").exists()


# -- results: columns the table drops, big integers, files of the user's (#32, #35) ------------------
def _probe_store(tmp_path: Path, capsys, grid: str = "{x: [0.5, 1.5, 2.5], size: [4, 8]}") -> Path:
    sweep = tmp_path / "p.yaml"
    sweep.write_text(f"name: cols/probe\njob: testing.probe\ngrid: {grid}\nseeds: [0, 1]\n")
    results = tmp_path / "r"
    code, _, err = run_cli(["sweep", sweep, "--workers", "0", "--results", results], capsys)
    assert code == 0, err
    return results


def test_results_in_80_columns_call_only_constant_columns_constant(tmp_path, capsys, monkeypatch):
    results = _probe_store(tmp_path, capsys)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli(["results", "--results", results], capsys)
    assert code == 0, err
    text = " ".join(out.split())
    constant = text.split("all 12 runs: ", 1)[1].split("┏", 1)[0]
    # the varying metrics the terminal has no room for are listed as left out, never as one value
    for name in ("metrics.value", "metrics.norm"):
        assert name not in constant, constant
    assert "more varying columns" in text and "metrics.value" in text.split("more varying")[1]
    assert "config.mode=ok" in constant  # truly constant: shown once above the table


def test_results_parquet_keeps_integers_beyond_64_bits_as_text(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    import sqlite3

    import pyarrow.parquet as pq

    results = _probe_store(tmp_path, capsys, "{x: [0.5, 1.5]}")
    with sqlite3.connect(results / "learnability.db") as conn:
        conn.execute("UPDATE runs SET metrics = ?", (json.dumps({"big": 2**64 + 1, "small": 3}),))
    conn.close()
    out = tmp_path / "t.parquet"
    code, _, err = run_cli(
        ["results", "--results", results, "--format", "parquet", "--out", out], capsys
    )
    assert code == 0, err
    table = pq.read_table(out).to_pydict()
    assert set(table["metrics.big"]) == {str(2**64 + 1)} and set(table["metrics.small"]) == {3}


def test_results_and_plot_write_again_over_their_own_files_only(tmp_path, capsys):
    results = _probe_store(tmp_path, capsys, "{x: [0.5, 1.5]}")
    csv_out, png = tmp_path / "out" / "runs.csv", tmp_path / "out" / "v.png"
    for _ in range(2):  # the second time over the file learnability wrote the first time
        argv = ["results", "--results", results, "--format", "csv", "--out", csv_out]
        assert run_cli(argv, capsys)[0] == 0
        argv = [
            "plot",
            "cols/probe",
            "--x",
            "x",
            "--y",
            "value",
            "--results",
            results,
            "--out",
            png,
        ]
        assert run_cli(argv, capsys)[0] == 0
    mine = tmp_path / "out" / "notes.csv"
    mine.write_text("mine\n")
    code, _, err = run_cli(["results", "--results", results, "--out", mine], capsys)
    assert code == 2 and "did not write" in err and mine.read_text() == "mine\n"


def test_plot_leaves_out_infinite_values_and_says_so(tmp_path, capsys):
    import sqlite3

    results = _probe_store(tmp_path, capsys, "{x: [0.5, 1.5]}")
    with sqlite3.connect(results / "learnability.db") as conn:
        conn.execute("UPDATE runs SET metrics = json_set(metrics, '$.value', 'inf') WHERE seed = 0")
    conn.close()
    argv = ["plot", "cols/probe", "--x", "x", "--y", "value", "--results", results,
            "--out", tmp_path / "v.png", "--by", "seed"]  # fmt: skip
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert "2 runs with an infinite value or x left out" in " ".join(out.split())


def test_sweep_seed_axes_are_refused_with_the_spelling_that_works(tmp_path, capsys):
    sweep = tmp_path / "s.yaml"
    sweep.write_text("name: s/seeds\njob: testing.probe\ngrid: {seed: [1, 2, 3]}\n")
    code, _, err = run_cli(["sweep", sweep, "--dry-run"], capsys)
    assert code == 2 and "seeds: [1, 2, 3]" in err
    sweep.write_text("name: s/seeds\njob: testing.probe\nseeds: [1, 2, 3]\n")
    code, out, err = run_cli(["sweep", sweep, "--dry-run"], capsys)
    assert code == 0 and "3 runs" in out, err


def test_plot_draws_names_with_brackets_and_dollars_as_typed(tmp_path, capsys):
    # '$' starts matplotlib's math notation (a bad formula was a traceback after the work)
    name = "d/$\\bad{$ [/x]"
    sweep = tmp_path / "d.yaml"
    sweep.write_text(f"name: {json.dumps(name)}\njob: testing.probe\ngrid: {{x: [1.0, 2.0]}}\n")
    results = tmp_path / "r"
    assert run_cli(["sweep", sweep, "--workers", "0", "--results", results], capsys)[0] == 0
    argv = [
        "plot",
        name,
        "--x",
        "x",
        "--y",
        "value",
        "--results",
        results,
        "--out",
        tmp_path / "d.png",
    ]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and out.startswith(name), out + err
    assert (tmp_path / "d.png").stat().st_size > 0
