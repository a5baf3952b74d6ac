"""`learnability.results()` as a DataFrame, `rate` / `rates`, and `learnability plot` on any sweep."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

import learnability
from cli_run import run_cli
from learnability.errors import UserError
from learnability.frame import column, rate, rates, sweep_figure
from learnability.stats import mean_ci, wilson
from learnability.sweep import Sweep
from learnability.sweep.jobs import RunContext, register_job
from learnability.sweep.runner import run_sweep


@dataclass
class DemoConfig:
    seed: int = 0
    n: int = 4
    kind: str = "a"
    lr: float = 0.1
    fail: bool = False


@register_job("testing.frame_demo", DemoConfig)
def _demo(config: DemoConfig, ctx: RunContext) -> dict:
    if config.fail:
        raise RuntimeError("asked to fail")
    offset = 100 if config.kind == "b" else 0
    return {
        "value": config.n * 10 + config.seed + offset,  # a known value per run
        "learned": config.seed != 2 or config.kind == "b",  # kind a: 2 of 3 seeds, kind b: 3 of 3
        "counts": [config.n, config.seed],
        "nested": {"a": 1.5, "b": {"c": 2}},
        "big": "inf",  # how a job's metrics store infinity
        "label": f"run{config.seed}",
    }


SEEDS = [0, 1, 2]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    results = tmp_path_factory.mktemp("frame") / "results"
    good = Sweep(
        name="demo/frame",
        job="testing.frame_demo",
        grid={"n": [4, 8], "kind": ["a", "b"]},
        seeds=SEEDS,
    )
    lrs = Sweep(name="demo/lrs", job="testing.frame_demo", grid={"lr": [0.1, 0.2]}, seeds=[0])
    broken = Sweep(name="demo/broken", job="testing.frame_demo", base={"fail": True})
    run_sweep([good, lrs, broken], results, workers=0, progress=False)
    return results


def test_results_is_a_frame_with_dotted_columns_and_lists_as_lists(store):
    df = learnability.results(sweep="demo/frame", results=store)
    assert isinstance(df, pd.DataFrame) and len(df) == 12
    assert list(df.columns[:9]) == [
        "run_id", "study", "sweep", "job", "status", "seed", "seconds", "attempts", "error",
    ]  # fmt: skip
    assert set(df["study"]) == {"demo"} and set(df["status"]) == {"ok"}
    assert pd.api.types.is_numeric_dtype(df["metrics.value"])
    row = df[(df["config.n"] == 8) & (df["config.kind"] == "a") & (df["seed"] == 1)].iloc[0]
    assert row["metrics.value"] == 81
    assert row["metrics.counts"] == [8, 1]  # a list, not a JSON string
    assert row["metrics.nested.a"] == 1.5 and row["metrics.nested.b.c"] == 2
    assert row["metrics.big"] == math.inf  # "inf" in the store, a float here
    assert row["config.lr"] == 0.1


def test_results_filters_and_refuses_unknown_names(store, tmp_path):
    # demo/lrs at lr 0.1 is the very run demo/frame has (n 4, kind a, seed 0): stored once, in both
    assert len(learnability.results(results=store)) == 12 + 1 + 1
    assert len(learnability.results(sweep="demo/lrs", results=store)) == 2
    assert len(learnability.results(study="demo", status="failed", results=store)) == 1
    assert (
        learnability.results(sweep="demo/broken", results=store)["error"]
        .iloc[0]
        .startswith("RuntimeError")
    )
    with pytest.raises(UserError, match=r"no sweep 'demo/fram' .*did you mean 'demo/frame'"):
        learnability.results(sweep="demo/fram", results=store)
    with pytest.raises(UserError, match="unknown status 'done'"):
        learnability.results(status="done", results=store)
    with pytest.raises(UserError, match="no results store"):
        learnability.results(results=tmp_path / "nowhere")


def test_column_finds_short_names_and_names_near_matches():
    df = pd.DataFrame(columns=["config.task.n", "config.model.n_layers", "metrics.sharpness"])
    assert column(df, "task.n") == column(df, "n") == "config.task.n"
    assert column(df, "sharpness") == "metrics.sharpness"
    with pytest.raises(
        UserError, match=r"unknown column 'sharpnes'; near matches: metrics.sharpness"
    ):
        column(df, "sharpnes")
    both = pd.DataFrame(columns=["config.task.n", "config.model.n"])
    with pytest.raises(UserError, match=r"'n' is ambiguous: config.task.n, config.model.n"):
        column(both, "n")


@pytest.mark.parametrize(("k", "m"), [(0, 5), (3, 5), (5, 5), (1, 1), (17, 40)])
def test_rate_is_the_proportion_with_its_wilson_interval(k, m):
    r = learnability.rate(k, m)
    assert (r.k, r.m, r.value) == (k, m, k / m)
    assert (r.lo, r.hi) == wilson(k, m)
    assert r.lo <= r.value <= r.hi


def test_rate_text_and_bad_counts():
    assert str(rate(3, 5)) == "3 of 5 units (60%, 95% CI 23–88%)"
    assert math.isnan(rate(0, 0).value)
    for k, m in [(4, 3), (-1, 3), (1.5, 3)]:
        with pytest.raises(UserError):
            rate(k, m)


def test_rates_counts_units_per_group(store):
    df = learnability.results(sweep="demo/frame", results=store)
    table = rates(df, by=["kind", "n"], success="learned")
    assert table.columns.tolist() == ["config.kind", "config.n", "k", "m", "rate", "lo", "hi"]
    assert table[["k", "m"]].values.tolist() == [[2, 3], [2, 3], [3, 3], [3, 3]]
    assert table["lo"].tolist()[0] == wilson(2, 3)[0]
    # a predicate instead of a column
    high = rates(df, by="kind", success=lambda d: d["metrics.value"] >= 80, unit="")
    assert high[["k", "m"]].values.tolist() == [[3, 6], [6, 6]]
    # grouped by kind alone, each seed appears at n = 4 and n = 8: counting both would be pseudo-units
    with pytest.raises(UserError, match="holds two runs of unit seed=0"):
        rates(df, by="kind", success="learned")


def _series(built):
    return {s.label: s for s in built.figure.panels[0].series}


def test_mean_ci_points_are_the_mean_and_t_interval_over_seeds(store):
    df = learnability.results(sweep="demo/frame", results=store)
    built = sweep_figure(df, "n", "value", hue="kind")
    assert (built.runs, built.units, built.xcategories) == (12, 3, None)
    a = _series(built)["kind = a"]
    assert a.x == [4, 8]
    for x, y, lo, hi in zip(a.x, a.y, a.lo, a.hi):
        expected = mean_ci([x * 10 + s for s in SEEDS])  # values n·10 + seed
        assert (y, lo, hi) == (expected.value, expected.lo, expected.hi)
        assert y == x * 10 + 1
    assert _series(built)["kind = b"].y == [141, 181]


def test_a_boolean_y_gets_wilson_intervals_and_by_seed_one_line_each(store):
    df = learnability.results(sweep="demo/frame", results=store)
    built = sweep_figure(df, "n", "learned", hue="kind")
    a = _series(built)["kind = a"]
    assert a.y == [2 / 3, 2 / 3] and (a.lo[0], a.hi[0]) == wilson(2, 3)
    lines = sweep_figure(df, "n", "value", hue="kind", by="seed").figure.panels[0].series
    assert len(lines) == 6  # 2 kinds × 3 seeds
    assert sorted(s.y for s in lines if s.color == "C0") == [[40, 80], [41, 81], [42, 82]]
    assert [s.label for s in lines].count("kind = a") == 1  # one legend entry per hue


def test_categorical_x_and_runs_differing_off_the_plot(store):
    df = learnability.results(sweep="demo/frame", results=store)
    built = sweep_figure(df, "kind", "value", hue="n")
    assert built.xcategories == ["a", "b"]
    assert _series(built)["n = 4"].y == [41, 141]  # kind a, kind b (dodged a little off 0 and 1)
    with pytest.raises(UserError, match=r"differ in config.lr"):
        sweep_figure(learnability.results(sweep="demo/lrs", results=store), "n", "value")


def test_plot_writes_png_and_pdf(store, tmp_path, capsys):
    png, pdf = tmp_path / "v.png", tmp_path / "v.pdf"
    code, out, _ = run_cli(
        ["plot", "demo/frame", "--x", "n", "--y", "value", "--hue", "kind", "--logy",
         "--results", store, "--out", png], capsys,
    )  # fmt: skip
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG" and "12 runs, 3 units" in out
    code, _, _ = run_cli(
        ["plot", "demo/frame", "--x", "config.n", "--y", "metrics.value", "--by", "seed",
         "--where", "kind=b", "--results", store, "--out", pdf], capsys,
    )  # fmt: skip
    assert code == 0 and pdf.read_bytes()[:4] == b"%PDF"
    code, out, _ = run_cli(
        ["plot", "demo/frame", "--x", "n", "--y", "value", "--hue", "kind", "--results", store],
        capsys,
    )
    assert code == 0 and (store / "plots" / "demo_frame_value_vs_n.png").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--x", "n", "--y", "valu"], "unknown --y column 'valu'; near matches: metrics.value"),
        (["--x", "nn", "--y", "value"], "unknown --x column 'nn'"),
        (["--x", "n", "--y", "counts"], "holds list values (e.g. [4, 0]), not numbers"),
        (["--x", "n", "--y", "label"], "holds str values"),
        (["--x", "n", "--y", "value", "--out", "x.svg"], "must end in .png or .pdf"),
        (["--x", "n", "--y", "value", "--by", "run"], "unknown --by 'run'"),
        (["--x", "n", "--y", "value", "--where", "kind=c"], "takes: 'a', 'b'"),
    ],
)
def test_plot_errors_are_one_line(store, capsys, args, message):
    code, _, err = run_cli(["plot", "demo/frame", *args, "--results", store], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_plot_of_an_empty_or_unknown_sweep(store, capsys):
    code, _, err = run_cli(
        ["plot", "demo/broken", "--x", "n", "--y", "value", "--results", store], capsys
    )
    assert code == 2 and "has no ok runs (1 failed)" in err
    code, _, err = run_cli(
        ["plot", "demo/nope", "--x", "n", "--y", "value", "--results", store], capsys
    )
    assert code == 2 and "no sweep 'demo/nope'" in err


# -- values a plot cannot show honestly, and stores nested too deep (#32) --------------------------
def _plain_frame(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(len(values))],
            "seed": list(range(len(values))),
            "config.n": [4.0] * len(values),
            "metrics.v": values,
        }
    )


def test_a_log_axis_over_values_at_or_below_zero_is_refused():
    with pytest.raises(UserError, match=r"--logy needs positive values.*3 of 3 runs"):
        sweep_figure(_plain_frame([-1.0, -2.0, -3.0]), "n", "v", logy=True)
    with pytest.raises(UserError, match="--logy"):
        sweep_figure(_plain_frame([1.0, 0.0, 3.0]), "n", "v", logy=True)
    assert sweep_figure(_plain_frame([1.0, 2.0, 3.0]), "n", "v", logy=True).runs == 3
    frame = _plain_frame([1.0, 2.0])
    frame["config.n"] = [0.0, 4.0]
    with pytest.raises(UserError, match="--logx needs positive values"):
        sweep_figure(frame, "n", "v", logx=True, by="seed")


def test_infinite_values_are_left_out_and_counted_or_refused_when_nothing_is_left():
    inf = math.inf
    built = sweep_figure(_plain_frame([1.0, inf, -inf, 2.0]), "n", "v")
    assert built.runs == 2 and "2 runs with an infinite v or n left out" in built.figure.caption
    with pytest.raises(UserError, match="infinite"):
        sweep_figure(_plain_frame([inf, inf]), "n", "v")


def test_nesting_deeper_than_the_limit_is_one_user_error_at_any_depth():
    from learnability.frame import MAX_DEPTH, check_nesting

    def nested(depth: int) -> dict:
        value: dict = {}
        for _ in range(depth - 1):
            value = {"a": value}
        return value

    check_nesting(nested(MAX_DEPTH), "metrics")
    for depth in (MAX_DEPTH + 1, 50_000):  # far past Python's recursion limit: still one line
        with pytest.raises(UserError, match=f"nested more than {MAX_DEPTH} levels"):
            check_nesting(nested(depth), "run 'x': its metrics")
