"""Trainable parameters of every model kind under every freeze preset, against the closed form.

The closed forms are written from each architecture (widths, biases, LayerNorms), not read from the
models: a model that gains or loses a parameter, or a freeze preset that trains the wrong group (the
two-head model's fixed positional embeddings becoming trainable: d·m + 2m instead of 2m), fails here.
"""

from __future__ import annotations

import pytest
import torch

from learnability.config import from_dict
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig, load_model, run_train
from learnability.models import (
    MODELS,
    BooleanTransformerConfig,
    GPTConfig,
    LSTMConfig,
    MLPConfig,
    TwoHeadConfig,
)
from learnability.train import PRESETS, apply_freeze, seeded_model

D, FF, L, V, T = 8, 12, 2, 5, 6  # width, MLP width, layers, vocabulary, positions


def _block(d: int, ff: int, norms: int) -> int:
    # fused q|k|v projection with bias, output projection, two-layer MLP, `norms` LayerNorms (gain, bias)
    return (3 * d * d + 3 * d) + (d * d + d) + (ff * d + ff) + (d * ff + d) + norms * 2 * d


def _cases():
    # (id, config, {preset: closed-form trainable count, or None where the preset leaves nothing})
    bt = BooleanTransformerConfig(n_layers=L, d_model=D, d_ff=FF, n_heads=2, max_len=T)
    # token, position (concat: half the width each), readout
    emb_bt = 2 * (D // 2) + T * (D // 2) + (D + 1)
    yield "boolean_transformer", bt, {"full": emb_bt + L * _block(D, FF, 2), "embeddings": emb_bt}
    add = BooleanTransformerConfig(
        n_layers=1, d_model=D, d_ff=FF, n_heads=2, embedding="add", ln="pre", positions="sinusoidal"
    )
    emb_add = 2 * D + (D + 1)  # sinusoidal positions have no parameters
    yield (
        "boolean_transformer_pre_add",
        add,
        {
            "full": emb_add + _block(D, FF, 2) + 2 * D,  # pre-LN adds a final LayerNorm
            "embeddings": emb_add,
        },
    )
    gpt = GPTConfig(vocab_size=V, max_len=T, n_layers=L, d_model=D, n_heads=2, d_ff=FF)
    emb_gpt = V * D + T * D + (V * D + V)  # token, position, unembedding with bias
    yield "gpt", gpt, {"full": emb_gpt + L * _block(D, FF, 2) + 2 * D, "embeddings": emb_gpt}
    lstm = LSTMConfig(vocab_size=V, d_model=D, n_layers=1)
    cell = 4 * D * D + 4 * D * D + 8 * D  # input and hidden weights of 4 gates, two bias vectors
    yield "lstm", lstm, {"full": V * D + cell + V * D + V, "embeddings": V * D + V * D + V}
    lstm_s = LSTMConfig(vocab_size=V, d_model=D, n_layers=1, output="scalar")
    yield "lstm_scalar", lstm_s, {"full": V * D + cell + D + 1, "embeddings": V * D + D + 1}
    mlp = MLPConfig(n_inputs=5, width=6, depth=2)
    yield "mlp", mlp, {"full": (5 * 6 + 6) + (6 * 6 + 6) + (6 + 1), "embeddings": 6 + 1}
    two = TwoHeadConfig(d=16, m=8)
    yield "two_head", two, {"full": 2 * 8, "embeddings": None}


CASES = list(_cases())


def test_the_cases_cover_every_model_kind_and_preset():
    assert {c.arch for _, c, _ in CASES} == set(MODELS)
    assert all(set(counts) == set(PRESETS) for _, _, counts in CASES)


@pytest.mark.parametrize(("name", "config", "counts"), CASES, ids=[c[0] for c in CASES])
def test_trainable_parameters_match_the_closed_form(name, config, counts):
    for preset, expected in counts.items():
        model = seeded_model(config, 0)
        if expected is None:
            with pytest.raises(UserError, match="leaves nothing to train"):
                apply_freeze(model, preset)
            continue
        params = apply_freeze(model, preset)
        assert sum(p.numel() for p in params) == expected, (name, preset)
        # requires_grad agrees with the optimiser's list: nothing else receives gradients
        assert sum(p.numel() for p in model.parameters() if p.requires_grad) == expected


def test_two_head_in_a_train_config_trains_two_m_and_keeps_v_fixed(tmp_path):
    config = from_dict(
        TrainJobConfig,
        {
            "task": {"function": "x3 ^ x7", "n": 16, "targets": "pm1", "test_size": 256},
            "model": {"arch": "two_head", "d": 16, "m": 8},
            "train": {"steps": 200, "lr": 0.05, "weight_decay": 0.0, "batch_size": 128},
        },
    )
    before = seeded_model(config.model, config.seed).position_embedding.weight.clone()
    metrics = run_train(config, tmp_path)
    assert metrics["trainable_params"] == 16  # 2m, not d·m + 2m = 144
    # y = −x_3 x_7 is what the two heads compute at a = e_3, b = e_7
    assert metrics["test_acc"] == 1.0
    model, _ = load_model(tmp_path / "model.pt")
    assert torch.equal(model.position_embedding.weight, before)  # bit-identical after training


def test_two_head_seeds_redraw_v_and_theta_and_seed_zero_is_the_plain_model():
    from learnability.models.two_head import TwoHead

    config = TwoHeadConfig(d=12, m=4)
    plain, zero, one = TwoHead(config), seeded_model(config, 0), seeded_model(config, 1)
    assert torch.equal(plain.V, zero.V) and torch.equal(plain.theta, zero.theta)
    assert not torch.equal(zero.V, one.V) and not torch.equal(zero.theta, one.theta)
    assert torch.equal(one.theta_tilde, -one.theta)  # the paper's θ̃ = −θ at every seed


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model": {"arch": "two_head", "d": 12, "m": 4}}, "model.d=12 must equal task.n=16"),
        (
            {"model": {"arch": "two_head", "d": 16, "m": 4}, "train": {"freeze": "embeddings"}},
            "leaves nothing to train",
        ),
        (
            {"model": {"arch": "two_head", "d": 16, "m": 4}, "train": {"freeze": ["position_*"]}},
            "keeps fixed",
        ),
    ],
)
def test_two_head_configs_that_cannot_work_are_refused_when_built(change, message):
    data = {"task": {"function": "x3 ^ x7", "n": 16, "targets": "pm1"}, **change}
    with pytest.raises(UserError, match=message):
        from_dict(TrainJobConfig, data)
