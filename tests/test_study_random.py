"""Study `random` end to end at a tiny plan (sweeps expand, jobs run inline into a store, every claim is judged
with the documented schema, every exhibit is drawn), the plans against the published protocol, the sanity gate
on synthetic records, and the facts the study rests on (embedding-only training leaves every other tensor
bit-identical; wider random transformers have larger attention logits)."""

from __future__ import annotations

import dataclasses
import math
import types

import pytest
import torch

from learnability.claims import VERDICTS
from learnability.models import GPTConfig, build_model
from learnability.studies import random_transformers as rt
from learnability.studies.base import Plan
from learnability.studies.pipeline import analyse_records
from learnability.studies.random_transformers.plan import (
    ABLATIONS,
    QUICK_PARAMS,
    AlgoTask,
    CircuitPlan,
    LanguagePlan,
    MemorisePlan,
    RandomParams,
    Recipe,
)
from learnability.tasks import build_task
from learnability.tasks.algorithmic import NeedleConfig
from learnability.train import TrainConfig, Trainer

_R = Recipe(1e-2, 4, 8, 1)


def _task(config: dict, widths: tuple[int, ...] = (8, 16)) -> AlgoTask:
    return AlgoTask(config, widths, (8,), _R, _R, (8,), _R)


TINY = RandomParams(
    tasks={
        "mod_add": _task({"name": "mod_add", "p": 7}),
        "needle": _task({"name": "needle", "max_pairs": 2, "test_size": 30, "split": "hash"}),
        "decimal_add": _task(
            {"name": "decimal_add", "digits": 2, "test_size": 30, "split": "hash"}
        ),
        "parens": _task(
            {"name": "parens", "max_pairs": 4, "test_size": 20, "split": "hash"}, (16,)
        ),
    },
    seeds=(0, 1),
    memorise=MemorisePlan(
        {"name": "memorise", "n_keys": 8, "n_values": 8, "offset_y": True}, 8, _R, _R
    ),
    language=LanguagePlan(
        {"name": "language", "vocab_size": 120, "seq_len": 8, "test_size": 8},
        random_width=32,
        full_widths=(4, 8),
        random=_R,
        full=_R,
        n_layers=2,
        n_heads=2,
    ),
    circuit=CircuitPlan(
        {"name": "circuit", "vocab_size": 8, "seq_len": 4, "test_size": 20},
        targets=(2, 4, 8),
        student={"d_model": 8, "n_layers": 1, "n_heads": 2},
        random=_R,
        full=_R,
    ),
    ablation_tasks=("mod_add",),
    ablation_seeds=(0, 1),
    probe_rows=64,
)
CLAIM_KEYS = {
    "id", "title", "statement", "paper_statement", "verdict", "rule", "control", "units", "robustness",
    "robust", "history", "scale", "scale_note", "measured", "details", "figure",
}  # fmt: skip


@pytest.fixture(scope="module")
def tiny_records(tmp_path_factory):
    from learnability.sweep.runner import run_sweep
    from learnability.sweep.store import Store

    root = tmp_path_factory.mktemp("random")
    mp = pytest.MonkeyPatch()
    mp.setenv("LEARNABILITY_CACHE", str(root / "cache"))
    plan = Plan("tiny", TINY)
    summary = run_sweep(rt.STUDY.sweeps(plan), root / "store", workers=0, progress=False)
    assert summary.failed == 0 and summary.crashed == 0, summary.failures
    store = Store(root / "store")
    records = store.records()
    store.close()
    mp.undo()
    return plan, records, root


def test_tiny_plan_end_to_end_every_claim_has_the_schema(tiny_records):
    plan, records, root = tiny_records
    report = analyse_records(rt.STUDY, records, plan, root / "figures")
    slugs = [c.id.split("/")[1] for c in report.claims]
    assert slugs == [
        "solves-mod-add", "solves-needle", "solves-decimal", "solves-parens", "width-matters",
        "ablation", "subspace", "memorisation", "language", "circuit",
    ]  # fmt: skip
    for claim in report.claims:
        row = claim.as_json()
        assert set(row) >= CLAIM_KEYS
        assert row["verdict"] in VERDICTS and row["measured"]
        assert row["rule"]["text"] and row["rule"]["version"] >= 2  # each has its pre-engine v1
        # every earlier version stays in the history, down to the pre-engine v1
        assert [h["version"] for h in row["history"]] == list(range(row["rule"]["version"], 0, -1))
        assert row["robustness"] and all(r["verdict"] in VERDICTS for r in row["robustness"])
        assert row["control"]["name"] and row["units"]["kind"]
    names = {f.name for f in report.figures}
    solves = {f"solves_{t}" for t in TINY.tasks}
    assert solves | {"needle_by_m", "subspace", "lm_ce_vs_params", "claim_circuit"} <= names
    # each solves-* claim shows its own figure: accuracy against width with its chance lines
    assert {c.figure for c in report.claims if c.id.split("/")[1].startswith("solves-")} == solves
    assert all(f.png.exists() for f in report.figures)
    titles = " | ".join(t.title for t in report.tables)
    for word in (
        "chance line",
        "Decimal",
        "Memorisation",
        "Language",
        "Subspace",
        "Which embedding",
    ):
        assert word in titles


def test_tiny_runs_report_diagnostics_and_nulls(tiny_records):
    _, records, _ = tiny_records
    by = {}
    for r in records:
        by.setdefault(r.sweep, []).append(r)
    needle = by["random/acc-needle"][0].metrics
    assert set(needle["acc_by_m"]) <= {"1", "2"} and 0.5 <= needle["copy_baseline"] <= 1.0
    dec = by["random/acc-decimal_add"][0].metrics
    assert len(dec["digit_acc"]) == 3 and dec["digit_chance"] == 0.1
    assert 0 <= dec["acc_published"] <= 1 and 0 <= dec["exact_match"] <= dec["acc_full"] + 1e-9
    assert 0.0 <= dec["rejection_rate"] <= 0.10 and dec["fresh_acc"] is not None
    mod = by["random/acc-mod_add"][0].metrics
    layers = mod["subspace"]
    assert [e["layer"] for e in layers] == [0, 1, 2] and layers[1]["rows"] == 49  # all 7² pairs
    assert all("init_pca" in e and "null_pca" in e for e in layers)
    mem = by["random/memorise"]
    for r in mem:
        m = r.metrics
        assert m["chance_hits"] == 64 / 8 and m["items"] == 64
        assert math.isclose(m["cap_bits_per_param"], 64 * 3 / m["n_trainable"])
        assert m["bits_per_param"] <= m["bits_per_param_raw"]
    lm = by["random/lm-random"][0].metrics
    assert lm["unigram_ce"] > 0 and len(lm["samples"]) == 3 and lm["epochs"] > 0


def test_paper_plan_is_the_published_protocol():
    paper = {s.name: s for s in rt.STUDY.sweeps(rt.STUDY.plan("paper"))}
    acc = paper["random/acc-mod_add"].expand()
    assert {r.config.model.d_model for r in acc} == {16, 32, 64, 128, 256, 512, 1024}
    assert {r.config.seed for r in acc} == set(range(10))
    assert {(r.config.train.steps, r.config.train.batch_size) for r in acc} == {(50_000, 4000)}
    assert all(r.config.train.converge_acc is None for r in acc)  # full budgets, no early stop
    assert {(r.config.model.n_heads, r.config.model.unembedding_bias) for r in acc} == {(4, False)}
    lstm = paper["random/lstm-needle"].expand()[0].config
    assert (lstm.model.n_layers, lstm.train.lr) == (2, 5e-3)
    mem = paper["random/memorise"].expand()
    assert {(r.config.train.steps, r.config.train.batch_size, r.config.train.lr,
             r.config.train.weight_decay) for r in mem} == {(168_000, 32_768, 5e-3, 1e-4)}  # fmt: skip
    assert all(r.config.task.offset_y for r in mem)
    lm = paper["random/lm-full"].expand()[0].config
    assert (lm.train.lr, lm.train.weight_decay, lm.model.dropout) == (6e-4, 0.1, 0.1)
    assert (lm.model.n_layers, lm.model.n_heads, lm.train.steps) == (
        4,
        8,
        600,
    )  # published; 5 epochs
    ablation = {tuple(r.config.train.freeze) for r in paper["random/ablation-parens"].expand()}
    assert ("token_embedding.*", "position_embedding.*") in ablation and len(ablation) == len(
        ABLATIONS
    )
    assert "GPU-hours" in rt.STUDY.estimate(rt.STUDY.plan("paper"))
    assert "fp32" in rt.STUDY.plan("paper").cost


def test_quick_plan_meets_the_issue():
    q = QUICK_PARAMS
    plan = rt.STUDY.plan("quick")
    quick = {s.name.split("/")[1]: s for s in rt.STUDY.sweeps(plan)}
    claims = {c.slug: c for c in rt.STUDY.claims(plan)}
    # ≥ 4 independent units (seeds) in every sweep a claim's rule reads, and those sweeps are its replicate;
    # except memorisation since issue 36: 2 restarts, its rule v4 being undecidable at this scale (the loss-bound
    # ratio of seeds 1–7, 1.75× [1.42, 2.17], sits inside the bands' indifference zone: power 0 at any count)
    for slug, claim in claims.items():
        assert claim.regime is not None, slug
        for short in claim.replicate:
            assert len(quick[short].seeds) >= (2 if slug == "memorisation" else 4), (slug, short)
    assert (
        not claims["solves-needle"].regime.inside and "1024" in claims["solves-needle"].regime.needs
    )
    assert "GPU-hours" in claims["solves-needle"].regime.needs
    # per-condition recipes: the fully trained baselines do not reuse the embedding-only lr
    assert any(t.random.lr != t.full.lr for t in q.tasks.values())
    # the memorisation table lets a fully trained model exceed 2.88 bits per parameter
    n, w = q.memorise.config["n_keys"], q.memorise.width
    full_params = 2 * (2 * n) * w + 2 * w + q.n_layers * (12 * w * w + 13 * w)
    assert n * n * math.log2(q.memorise.config["n_values"]) / full_params > 2.88
    assert (
        q.language is None and "lm-random" not in quick
    )  # not run at this scale: the claim says so
    # a cost guard: 88 runs since memorisation and circuit run seeds 1–7 (stop 29, by power); the study's wall
    # time stayed at 297 → 296 s on one machine, the last block asking only the scored positions
    assert sum(len(s.expand()) for s in quick.values()) <= 88
    assert all(s.expand()[0].config.task.split == "hash" for k, s in quick.items()
               if k.endswith(("parens", "decimal_add", "needle")))  # fmt: skip


def test_quick_plan_cpu_cuts_issue_36():
    """Issue 36's cuts change only what quick runs, not what its claims read: modular addition evaluates its
    43 held-out pairs every 25 steps (the stop at 1.0 fires at most 24 steps late instead of 249), memorisation
    evaluates twice (the claims read the final evaluation only) and runs 2 restarts; the paper plan is unchanged."""
    quick = {s.name.split("/")[1]: s for s in rt.STUDY.sweeps(rt.STUDY.plan("quick"))}
    paper = {s.name.split("/")[1]: s for s in rt.STUDY.sweeps(rt.STUDY.plan("paper"))}
    assert {c.config.train.eval_every for c in quick["acc-mod_add"].expand()} == {25}
    assert {c.config.train.eval_every for c in quick["memorise"].expand()} == {300, 750}
    # 500 fresh draws instead of 2,000 saved ≈ 1 of a needle run's 88 CPU-s: not taken
    assert {c.config.fresh_size for c in quick["acc-needle"].expand()} == {2000}
    assert {c.config.train.eval_every for c in paper["acc-mod_add"].expand()} == {5000}
    # modular addition keeps its Wilson rate's 8 restarts; memorisation 2 (undecidable here at any count)
    assert len(quick["acc-mod_add"].seeds) == 8 and len(quick["memorise"].seeds) == 2


def _record(sweep, acc, width, freeze="full", seed=0, **metrics):
    return types.SimpleNamespace(
        sweep=f"random/{sweep}", status="ok", run_id=f"{sweep}-{width}-{freeze}-{seed}", seed=seed, seconds=1.0,
        config={"model": {"arch": "gpt", "d_model": width}, "train": {"freeze": freeze}, "seed": seed},
        metrics={"test_acc": acc, "fresh_acc": acc, "chance": 1 / 7, "blind_acc": 1 / 7, **metrics},
    )  # fmt: skip


def test_a_failing_baseline_makes_the_claim_inconclusive_pipeline(tmp_path):
    params = dataclasses.replace(TINY, tasks={"mod_add": TINY.tasks["mod_add"]})
    plan = Plan("tiny", params)
    records = [_record("acc-mod_add", 1.0, 16, "embeddings", s) for s in (0, 1)]
    records += [_record("full-mod_add", 0.41, 8, "full", s) for s in (0, 1)]
    report = analyse_records(rt.STUDY, records, plan, tmp_path)
    solves = next(c for c in report.claims if c.id == "random/solves-mod-add")
    assert (
        solves.verdict == "inconclusive"
        and "pipeline" in solves.measured
        and "0.41" in solves.measured
    )
    # with a working baseline the same random runs are judged: 1.0 on both seeds, chance 1/7; two restarts that
    # both generalise give a Wilson interval [0.34, 1] for the rate (rule v4): inconclusive, eight give [0.68, 1]
    records[2:] = [_record("full-mod_add", 1.0, 8, "full", s) for s in (0, 1)]
    report = analyse_records(rt.STUDY, records, plan, tmp_path)
    solves = next(c for c in report.claims if c.id == "random/solves-mod-add")
    assert solves.verdict == "inconclusive" and "0.143" in solves.control["value"]
    records += [_record("acc-mod_add", 1.0, 16, "embeddings", s) for s in range(2, 8)]
    report = analyse_records(rt.STUDY, records, plan, tmp_path)
    solves = next(c for c in report.claims if c.id == "random/solves-mod-add")
    assert solves.verdict == "reproduced" and "8/8" in solves.measured


@pytest.mark.parametrize(
    "freeze", ["embeddings", ["position_embedding.*"], ["token_embedding.*", "unembedding.*"]]
)
def test_embedding_only_training_leaves_everything_else_bit_identical(freeze):
    task = build_task(NeedleConfig(max_pairs=3, test_size=20), data_seed=0)
    model = build_model(
        GPTConfig(vocab_size=256, max_len=task.seq_len, d_model=16, unembedding_bias=False), seed=0
    )
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    Trainer(
        model,
        task,
        TrainConfig(steps=5, batch_size=8, lr=1e-2, weight_decay=0.1, eval_every=5, freeze=freeze),
    ).fit()
    patterns = (
        ["token_embedding.*", "position_embedding.*", "unembedding.*"]
        if freeze == "embeddings"
        else freeze
    )
    prefixes = tuple(p.rstrip("*") for p in patterns)
    assert "unembedding.bias" not in before  # GPT-2's lm_head has no bias
    for name, p in model.named_parameters():
        if name.startswith(prefixes):
            assert not torch.equal(p, before[name]), name
        else:
            assert torch.equal(p, before[name]), name


def test_wider_random_transformers_have_larger_attention_logits():
    """Why width matters for random transformers (GPT-2 init, std 0.02, LayerNorm before attention): the
    spread of attention logits grows like 0.02² · d_model, so a narrow random model attends almost uniformly
    whatever its embeddings, and a wide one can route information."""
    from learnability.measure.probes import attention_maps

    tokens = torch.randint(0, 50, (8, 16), generator=torch.Generator().manual_seed(0))
    spread = {}
    for width in (16, 512):
        model = build_model(
            GPTConfig(vocab_size=50, max_len=16, n_layers=1, n_heads=2, d_model=width), seed=0
        )
        logits = attention_maps(model, tokens)[0][:, :, -1].log()  # last query, up to a shift
        spread[width] = logits.std(-1).mean().item()
    assert spread[16] < 0.02  # nearly uniform attention
    assert spread[512] > 10 * spread[16]  # expected ratio 512 / 16 = 32


def test_fano_bits_closed_forms_and_a_lower_bound():
    from learnability.jobs.random_transformers import fano_bits, memorisation
    from learnability.tasks.algorithmic import MemoriseConfig

    n, m = 16384, 128
    assert fano_bits(n, n, m) == n * 7 and fano_bits(n / m, n, m) == pytest.approx(0.0, abs=1e-6)
    # a model that knows k items and guesses uniformly elsewhere stores exactly k·log2 M bits: Fano at its
    # expected hit rate must not exceed that (the bound is a lower bound)
    for k in (0, 50, 500, 5000, 16000):
        assert fano_bits(k + (n - k) / m, n, m) <= k * 7 + 1e-6
    task = build_task(MemoriseConfig(n_keys=128, n_values=128, offset_y=True), data_seed=1)
    out = memorisation(task, 428 / n, 8224)
    # issue 21: storing each x's most common value (≤ 896 bits) beats 428 hits, which hits above chance credit
    # with 2,100 bits; the Fano bound credits 428 hits with fewer bits than that predictor's hits
    assert out["per_key_max_bits"] == 896 and out["per_key_hits"] > out["hits"] == 428
    assert out["bits_stored"] == (428 - 128) * 7 > out["per_key_max_bits"]
    assert out["bits_fano"] < out["per_key_fano_bits"] <= out["per_key_max_bits"]


def _decimal_records(acc: float, blind: float):
    metrics = {"acc_published": acc, "acc_full": acc, "blind_published": blind, "blind_full": blind}
    records = [_record("acc-decimal_add", acc, 16, "embeddings", s, **metrics) for s in range(4)]
    return records + [
        _record("full-decimal_add", 1.0, 8, "full", s, acc_published=1.0) for s in (0, 1)
    ]


def test_decimal_is_judged_against_the_input_blind_predictor(tmp_path):
    plan = Plan(
        "tiny",
        dataclasses.replace(
            TINY, tasks={"decimal_add": TINY.tasks["decimal_add"]}, ablation_tasks=()
        ),
    )
    records = _decimal_records(0.93, 0.8)
    claim = next(
        c
        for c in analyse_records(rt.STUDY, records, plan, tmp_path).claims
        if c.id.endswith("decimal")
    )
    # 0.93 is 0.13 above the blind line 0.8 (the band wants > 0.2): inconclusive; rule v2 read 0.1 per digit
    assert claim.verdict == "inconclusive" and "0.8" in claim.control["value"]
    assert {h["version"]: h["verdict"] for h in claim.history}[2] == "reproduced"


def test_an_out_of_regime_negative_is_inconclusive_scale(tmp_path):
    plan = Plan(
        "tiny", dataclasses.replace(TINY, tasks={"needle": TINY.tasks["needle"]}, ablation_tasks=())
    )
    metrics = {"copy_baseline": 0.75, "blind_acc": 0.01}
    records = [
        _record("acc-needle", 0.75 + 0.001 * s, 16, "embeddings", s, **metrics) for s in range(4)
    ]
    records += [_record("full-needle", 1.0, 8, "full", s) for s in (0, 1)]
    claim = next(
        c
        for c in analyse_records(rt.STUDY, records, plan, tmp_path).claims
        if c.id.endswith("needle")
    )
    assert (claim.verdict, claim.qualifier) == (
        "not reproduced",
        "outside regime",
    )  # at the copy line, but width 16
    assert claim.regime["inside"] is False and "1024" in claim.regime["needs"]
    assert "0.75" in claim.control["value"]  # the copy line, above the input-blind 0.01


def test_rule_revisions_keep_the_old_versions():
    claims = {c.slug: c for c in rt.STUDY.claims(rt.STUDY.plan("quick"))}
    sub = claims["subspace"]
    # v4 judges each of the four tasks on its own; v3 pooled them (two parts), v2 had the PC/neuron ratio
    assert len(sub.rule.parts) == 4 and sub.rule.version == 4
    assert len(sub.history[0].rule.parts) == 2 and sub.history[0].choices == {"view": "pooled"}
    assert len(sub.history[1].rule.parts) == 3
    mem = claims["memorisation"]
    assert mem.defaults()["bits"] == "loss" and mem.history[0].choices == {"bits": "fano"}
    assert mem.history[1].choices == {"bits": "chance-corrected"}
    mod = claims["solves-mod-add"]
    assert mod.rule.version == 4 and mod.history[0].rule.version == 3
    assert claims["ablation"].evidence(None, {}).not_run  # not run at the quick scale
    assert claims["language"].evidence(None, {}).not_run


def test_notes_print_the_interval_the_cards_print():
    from learnability import stats
    from learnability.studies.random_transformers.evidence import est, fmt

    # accuracies: the t interval cut to [0, 1], exactly the rules' mean_ci(values, (0, 1))
    accs = [0.9, 1.0, 1.0, 1.0]
    assert est(accs) == stats.mean_ci(accs, (0.0, 1.0)) and est(accs).hi == 1.0
    assert fmt(accs) == stats.mean_ci(accs, (0.0, 1.0)).fmt(3)
    # anything not in [0, 1] (bits, hits, cross-entropies) keeps the uncut interval; None and nan are skipped
    e = est([2.0, 4.0, None, float("nan")])
    assert (e.value, e.n) == (3.0, 2) and e.lo < 0.0 < 6.0 < e.hi
