"""Study `random` end to end at a tiny scale (sweeps expand, jobs run inline into a store, analysis draws every
figure and returns a verdict per claim), plus the facts the study rests on: embedding-only training leaves every
other tensor bit-identical, and a random transformer fits a tiny modular addition through its embeddings alone."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from learnability.models import GPTConfig, build_model
from learnability.studies import random_transformers as rt
from learnability.studies.legacy import FigureSink, StudyResults
from learnability.tasks import build_task
from learnability.tasks.algorithmic import NeedleConfig
from learnability.train import TrainConfig, Trainer

TINY = dataclasses.replace(
    rt.SCALES["quick"],
    widths=[8, 16],
    seeds=[0],
    tasks={
        "mod_add": {"name": "mod_add", "p": 7},
        "needle": {"name": "needle", "max_pairs": 3, "test_size": 40},
        "decimal_add": {"name": "decimal_add", "digits": 2, "test_size": 40},
        "parens": {"name": "parens", "max_pairs": 3, "test_size": 30},
    },
    train={t: {"steps": 6, "batch_size": 16, "warmup_steps": 2} for t in rt.ALGORITHMIC},
    lstm_widths=[8],
    ablation_width=16,
    memorise={"name": "memorise", "n_keys": 4, "n_values": 4},
    memorise_widths=[8],
    lm_task={"name": "language", "vocab_size": 120, "seq_len": 8, "test_size": 8},
    lm_widths_random=[8, 16],
    lm_widths_full=[8],
    lm_train={"steps": 4, "batch_size": 4, "warmup_steps": 1},
    lm_depth_width=8,
    circuit_targets=[2, 4],
    circuit_task={"name": "circuit", "vocab_size": 8, "seq_len": 4, "test_size": 20},
    circuit_student={"d_model": 8, "n_layers": 1, "n_heads": 2},
    circuit_train={"steps": 4, "batch_size": 8, "warmup_steps": 1},
)


@pytest.fixture
def tiny_scale(monkeypatch, tmp_path):
    monkeypatch.setitem(rt.SCALES, "tiny", TINY)
    monkeypatch.setenv("LEARNABILITY_CACHE", str(tmp_path / "cache"))
    return "tiny"


def test_sweeps_expand_and_name_the_study(tiny_scale):
    for scale in ("quick", "paper", tiny_scale):
        sweeps = rt.STUDY.sweeps(scale)
        assert all(s.name.startswith("random/") for s in sweeps)
        assert all(len(s.expand()) > 0 for s in sweeps)
    paper = {s.name: s for s in rt.STUDY.sweeps("paper")}
    acc = paper["random/acc-mod_add"].expand()
    assert {r.config.model.d_model for r in acc} == {16, 32, 64, 128, 256, 512, 1024}
    assert {r.config.seed for r in acc} == set(range(10))
    assert {r.config.task.p for r in acc} == {199}
    assert {(r.config.train.steps, r.config.train.batch_size) for r in acc} == {(50_000, 4000)}
    assert "GPU-hours" in rt.STUDY.estimate("paper")
    assert all(
        r.config.train.converge_acc is None for r in acc
    )  # paper: full budgets, no early stop


def test_quick_scale_names_its_reduced_sizes():
    quick = rt.scale_sizes(rt.SCALES["quick"], "quick")
    assert "p = 29" in quick and "paper: p = 199" in quick
    paper = rt.scale_sizes(rt.SCALES["paper"], "paper")
    assert "p = 199" in paper and "10-digit" in paper and "≤ 60 symbols" in paper
    sweeps = {s.name: s for s in rt.STUDY.sweeps("quick")}
    runs = sweeps["random/acc-mod_add"].expand()
    # quick runs stop early only on a perfect test score; the ablation width is one of the accuracy widths
    assert {r.config.train.converge_acc for r in runs} == {1.0}
    assert rt.SCALES["quick"].ablation_width in rt.SCALES["quick"].widths


def test_study_runs_end_to_end(tiny_scale, tmp_path):
    from learnability.sweep.runner import run_sweep
    from learnability.sweep.store import Store

    summary = run_sweep(rt.STUDY.sweeps(tiny_scale), tmp_path / "store", workers=0, progress=False)
    assert summary.failed == 0 and summary.crashed == 0, summary.failures
    store = Store(tmp_path / "store")
    records = store.records()
    store.close()
    out = FigureSink(tmp_path / "figs", "random")
    claims = rt.STUDY.analyse(StudyResults(records, tiny_scale), out)
    assert len(claims) == 6
    assert all(c.verdict in ("reproduced", "not reproduced", "inconclusive") for c in claims)
    assert all(c.measured and c.paper_statement for c in claims)
    assert (
        "p = 7" in claims[0].measured and "p = 7" in claims[3].measured
    )  # the reduced sizes are named
    names = {f.name for f in out.figures}
    assert names >= {
        "accuracy_vs_width",
        "needle_attention",
        "modadd_embedding_pcs",
        "pca_vs_neurons",
        "lm_ce_vs_width",
        "kl_vs_target_width",
    }
    assert all(f.png.exists() for f in out.figures)
    titles = " | ".join(t.title for t in out.tables)
    for word in (
        "accuracy",
        "Memorisation",
        "Language",
        "Greedy samples",
        "Which parameters",
        "Subspace",
    ):
        assert word in titles
    lm = [r for r in records if r.sweep == "random/lm-random"]
    assert all(r.metrics["unigram_ce"] > 0 and len(r.metrics["samples"]) == 3 for r in lm)
    mem = [r for r in records if r.sweep == "random/memorise"]
    assert all(r.metrics["bits_per_param"] >= 0 for r in mem)


@pytest.mark.parametrize(
    "freeze", ["embeddings", ["position_embedding.*"], ["token_embedding.*", "unembedding.*"]]
)
def test_embedding_only_training_leaves_everything_else_bit_identical(freeze):
    task = build_task(NeedleConfig(max_pairs=3, test_size=20), data_seed=0)
    model = build_model(
        GPTConfig(vocab_size=256, max_len=task.seq_len, n_layers=2, d_model=16), seed=0
    )
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    Trainer(
        model,
        task,
        TrainConfig(steps=5, batch_size=8, lr=1e-2, weight_decay=0.1, eval_every=5, freeze=freeze),
    ).fit()
    patterns = rt.ABLATIONS["all three"] if freeze == "embeddings" else freeze
    prefixes = tuple(p.rstrip("*") for p in patterns)
    for name, p in model.named_parameters():
        if name.startswith(prefixes):
            assert not torch.equal(p, before[name]), name
        else:
            assert torch.equal(p, before[name]), name


def test_wider_random_transformers_have_larger_attention_logits():
    """Why width matters for random transformers (GPT-2 init, std 0.02, LayerNorm before attention): the spread of
    attention logits grows like 0.02² · d_model, so a narrow random model attends almost uniformly whatever its
    embeddings, and a wide one can route information."""
    from learnability.measure.probes import attention_maps

    tokens = torch.randint(0, 50, (8, 16), generator=torch.Generator().manual_seed(0))
    spread = {}
    for width in (16, 512):
        model = build_model(
            GPTConfig(vocab_size=50, max_len=16, n_layers=1, n_heads=2, d_model=width), seed=0
        )
        logits = attention_maps(model, tokens)[0][
            :, :, -1
        ].log()  # last query over all 16 keys, up to a shift
        spread[width] = logits.std(-1).mean().item()
    assert spread[16] < 0.02  # nearly uniform attention
    assert spread[512] > 10 * spread[16]  # expected ratio 512 / 16 = 32
