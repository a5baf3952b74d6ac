"""Study `sparse_xor`: sweeps expand and validate, tiny versions of every job run inline into a temporary
store, analyse yields figures and one ClaimResult per claim; and scientific facts at small d."""

from __future__ import annotations

import types

import pytest

from learnability.errors import UserError
from learnability.studies.legacy import FigureSink, StudyResults
from learnability.studies.sparse_xor import (
    STUDY,
    ManyStepsConfig,
    MinMConfig,
    OneStepConfig,
    SamplesConfig,
    StepGrid,
    many_steps,
    min_m,
    one_step,
    samples_needed,
)

GRID = StepGrid(-4.0, 12.0, 2)


def test_sweeps_expand_for_both_scales() -> None:
    for scale in ("quick", "paper"):
        sweeps = STUDY.sweeps(scale)
        names = {s.name for s in sweeps}
        assert {"sparse_xor/one_step", "sparse_xor/min_m", "sparse_xor/kinds", "sparse_xor/many_steps",
                "sparse_xor/samples"} <= names  # fmt: skip
        assert any(n.startswith("sparse_xor/ffnn_d") for n in names)
        for s in sweeps:
            assert s.name.startswith("sparse_xor/") and s.expand()
    with pytest.raises(UserError):
        STUDY.sweeps("huge")


def test_one_step_softmax_succeeds_and_linear_fails() -> None:
    soft = [one_step(OneStepConfig(d=128, seed=s, steps=GRID, sign_samples=200)) for s in range(4)]
    assert sum(r["best_success"] for r in soft) >= 3
    best = next(r for r in soft if r["best_success"])
    assert best["sign_accuracy"] == 1.0 and best["worst_case_error"] < 1.0
    assert best["masses"][0][0] + best["masses"][0][1] > 0.9
    lin = [
        one_step(OneStepConfig(d=128, seed=s, steps=GRID, attention="linear", sign_samples=0))
        for s in range(2)
    ]
    assert not any(any(r["success"]) for r in lin)


def test_jobs_validate_input() -> None:
    with pytest.raises(UserError, match="attention kind"):
        one_step(OneStepConfig(d=16, attention="cosine"))  # type: ignore[arg-type]
    with pytest.raises(UserError, match="samples"):
        one_step(OneStepConfig(d=16, samples=-1))
    with pytest.raises(UserError, match="step grid"):
        StepGrid(3.0, 1.0, 2).etas()
    with pytest.raises(UserError, match="steps"):
        many_steps(ManyStepsConfig(d=16, steps=0))


def _rec(sweep: str, config, metrics, status: str = "ok"):
    from learnability.config import to_dict

    return types.SimpleNamespace(
        sweep=sweep, config=to_dict(config), metrics=metrics, status=status
    )


def test_end_to_end_inline_store(tmp_path) -> None:
    from learnability.sweep.runner import run_sweep
    from learnability.sweep.spec import Sweep
    from learnability.sweep.store import Store

    g = {"lo": -4.0, "hi": 12.0, "per_decade": 2}
    sweeps = [
        Sweep("sparse_xor/one_step", "sparse_xor.one_step", base={"steps": g, "sign_samples": 100},
              grid={"d": [16, 64]}, seeds=[0, 1]),
        Sweep("sparse_xor/min_m", "sparse_xor.min_m", base={"seeds": [0, 1], "m_grid": [4, 8, 16, 32], "steps": g},
              grid={"d": [16, 64]}, seed_key=""),
        Sweep("sparse_xor/kinds", "sparse_xor.one_step", base={"d": 64, "steps": g, "sign_samples": 0},
              grid={"attention": ["softmax", "linear", "erf", "sigmoid"]}, seeds=[0]),
        Sweep("sparse_xor/many_steps", "sparse_xor.many_steps", base={"d": 64, "steps": 5, "grid": g},
              grid={"attention": ["softmax", "erf"]}, seeds=[0]),
        Sweep("sparse_xor/samples", "sparse_xor.samples",
              base={"n_grid": [64, 256, 1024, 4096], "steps": g}, grid={"d": [16, 32]}, seeds=[1]),
    ]  # fmt: skip
    store = Store(tmp_path / "store")
    run_sweep(sweeps, store, workers=0, progress=False)
    records = store.records()
    assert records and all(r.status == "ok" for r in records), [r.error for r in records]
    # The FFNN baseline: synthetic train-job records (training is tested by the trainer's own tests).
    for d, found in ((16, 4), (64, 4)):
        for w in (2, 4):
            cfg = {"task": {"n": d}, "model": {"width": w}}
            loss = 0.01 if w >= found else 0.6
            records.append(types.SimpleNamespace(sweep=f"sparse_xor/ffnn_d{d}", config=cfg,
                                                 metrics={"test_loss": loss}, status="ok"))  # fmt: skip
    out = FigureSink(tmp_path / "fig", "sparse_xor")
    claims = STUDY.analyse(StudyResults(records, "quick"), out)
    assert len(claims) == 5
    assert all(c.verdict in ("reproduced", "not reproduced", "inconclusive") for c in claims)
    assert {f.name for f in out.figures} >= {
        "one_step",
        "polylog",
        "attention_kinds",
        "samples",
        "ffnn",
    }
    assert all(f.png.exists() for f in out.figures)
    ffnn = claims[-1]
    assert ffnn.details["points"][0][2] == 4 * 17 + 5  # width·(d+1) + width + 1


def test_min_m_and_samples_are_small_at_small_d() -> None:
    r = min_m(
        MinMConfig(
            d=64, seeds=[0, 1, 2, 3], m_grid=[2, 4, 8, 16, 32, 64], steps=GRID, min_success=0.7
        )
    )
    assert r["m_star"] is not None and r["m_star"] <= 32
    s = samples_needed(SamplesConfig(d=16, seed=1, n_grid=[2**k for k in range(5, 14)], steps=GRID))
    assert not s["population_success"] or (s["n_star"] is not None and s["n_star"] <= 4096)


def test_chunked_scan_matches_and_finite_sample_selects(monkeypatch) -> None:
    import torch

    from learnability.studies import sparse_xor as sx

    model = sx._model(64, 18, "softmax", 2, torch.device("cpu"))
    etas = GRID.etas()
    whole = sx.one_step_scan(model, etas, sx.Criterion())
    monkeypatch.setattr(sx, "CHUNK_ELEMENTS", 2 * 64 * 3)  # 3 step sizes per chunk
    parts = sx.one_step_scan(model, etas, sx.Criterion())
    assert torch.equal(whole.loss, parts.loss) and torch.equal(whole.success, parts.success)
    # On many strings the finite-sample step, with its step size picked on training strings, matches the population one.
    g = torch.Generator().manual_seed(0)
    x = (torch.randint(0, 2, (20000, 64), generator=g) * 2 - 1).double()
    p, q = model.support
    fin = sx.one_step_scan(model, etas, sx.Criterion(), x, -x[:, p] * x[:, q], select=2000)
    assert fin.select_loss is not None and fin.select_loss.shape == etas.shape
    assert bool(fin.success[int(fin.select_loss.argmin())]) == bool(whole.success.any())
