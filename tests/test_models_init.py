"""The init schemes every model kind shares (`learnability.models.init`): the drawn weights' distribution
against its closed form, the defaults unchanged, the √D token scaling, and bad values refused."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest
import torch
from torch import nn

from learnability.config import config_hash, from_dict
from learnability.errors import UserError
from learnability.models import (
    BooleanTransformerConfig,
    GPTConfig,
    LSTMConfig,
    MLPConfig,
    build_model,
)
from learnability.models.layers import LayerNorm


def small(kind: str, **init: Any) -> Any:
    """A small model config of `kind` with the init fields `init` (widths ≥ 32: enough numbers)."""
    if kind == "boolean_transformer":
        return BooleanTransformerConfig(d_model=32, d_ff=48, n_heads=2, max_len=8, **init)
    if kind == "gpt":
        return GPTConfig(vocab_size=12, max_len=8, d_model=32, d_ff=48, **init)
    if kind == "lstm":
        return LSTMConfig(vocab_size=5, d_model=32, n_layers=2, **init)
    return MLPConfig(n_inputs=24, width=40, depth=2, **init)


KINDS = ["boolean_transformer", "gpt", "lstm", "mlp"]


def every_number(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()]).double()


def assert_second_moment(x: torch.Tensor, expected: float, kurtosis: float) -> None:
    """mean(x²) ≈ `expected` (x has mean 0) within 5 standard errors: Var(x²) = (kurtosis − 1)·expected²."""
    se = math.sqrt((kurtosis - 1) * expected**2 / x.numel())
    assert abs(float(x.pow(2).mean()) - expected) < 5 * se, (float(x.pow(2).mean()), expected, se)


@pytest.mark.parametrize("kind", KINDS)
def test_uniform_draws_every_parameter_in_plus_minus_b(kind):
    b = 3.0
    x = every_number(build_model(small(kind, init="uniform", init_scale=b), seed=1))
    assert x.numel() > 2000
    assert float(x.abs().max()) <= b and float(x.abs().max()) > 0.99 * b  # fills [−B, B]
    assert abs(float(x.mean())) < 5 * b / math.sqrt(3 * x.numel())
    assert_second_moment(x, b * b / 3, kurtosis=9 / 5)  # U[−B, B]: variance B²/3


@pytest.mark.parametrize("kind", KINDS)
def test_gaussian_draws_every_parameter_with_std_sigma(kind):
    sigma = 0.7
    x = every_number(build_model(small(kind, init="gaussian", init_scale=sigma), seed=2))
    assert abs(float(x.mean())) < 5 * sigma / math.sqrt(x.numel())
    assert_second_moment(x, sigma * sigma, kurtosis=3.0)


def xavier_blocks(model: nn.Module) -> list[torch.Tensor]:
    """Every matrix as Xavier sees it: attention q / k / v and an LSTM's four gates block by block."""
    out: list[torch.Tensor] = []
    for name, p in model.named_parameters():
        if p.dim() < 2:
            continue
        parts = 3 if name.endswith("in_proj.weight") else 4 if ".weight_" in name else 1
        out.extend(p.detach().double().chunk(parts))
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scheme", ["xavier_uniform", "xavier_normal"])
def test_xavier_matrices_have_variance_two_over_fans_and_zero_biases(kind, scheme):
    model = build_model(small(kind, init=scheme), seed=3)
    z = []  # every weight over its block's Xavier standard deviation
    for block in xavier_blocks(model):
        fan_out, fan_in = block.shape
        var = 2 / (fan_in + fan_out)
        if scheme == "xavier_uniform":
            assert float(block.abs().max()) <= math.sqrt(3 * var) + 1e-12
        z.append(block.flatten() / math.sqrt(var))
    assert_second_moment(torch.cat(z), 1.0, kurtosis=9 / 5 if scheme == "xavier_uniform" else 3.0)
    gains = {id(m.weight) for m in model.modules() if isinstance(m, LayerNorm)}
    for p in model.parameters():
        if p.dim() < 2:
            assert torch.all(p == (1.0 if id(p) in gains else 0.0))


def test_xavier_takes_fused_matrices_block_by_block():
    """Per gate (H × D), not per (4H × D) matrix: the variance tells the two apart."""
    model: Any = build_model(LSTMConfig(d_model=64, init="xavier_normal"), seed=4)
    w = model.lstm.weight_hh_l0.detach().double()  # (4H, H)
    assert_second_moment(w.flatten(), 2 / (64 + 64), kurtosis=3.0)


def test_gpt_pytorch_init_is_pytorchs_and_default_is_gpt2s():
    gpt2: Any = build_model(small("gpt"), seed=5)
    torch_init: Any = build_model(small("gpt", init="pytorch"), seed=5)
    emb = torch_init.token_embedding.weight.detach().double().flatten()
    assert_second_moment(emb, 1.0, kurtosis=3.0)  # nn.Embedding: N(0, 1)
    fc = torch_init.layers[0].mlp.fc.weight.detach()  # kaiming-uniform(√5): U(±1/√fan_in)
    assert float(fc.abs().max()) <= 1 / math.sqrt(32)
    assert_second_moment(gpt2.token_embedding.weight.detach().double().flatten(), 0.02**2, 3.0)


@pytest.mark.parametrize("kind", ["boolean_transformer", "lstm", "mlp"])
def test_pytorch_is_stored_as_the_default_where_they_are_the_same(kind):
    named = small(kind, init="pytorch")
    assert named.init == "default"
    assert config_hash("train", named) == config_hash("train", small(kind))
    a, b = build_model(named, seed=6), build_model(small(kind), seed=6)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def _digest(model: nn.Module) -> str:
    h = hashlib.sha256()
    for name, value in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(value.detach().cpu().numpy().tobytes())
    return h.hexdigest()[:16]


# state-dict digests of the default inits as drawn before the schemes were shared (seed 3)
GOLDEN = {
    "bt": ("e2e19b67b54aea04", BooleanTransformerConfig(d_model=16, d_ff=24, init_scale=2.0)),
    "bt_xavier": (
        "e275ce68c28580ee",
        BooleanTransformerConfig(d_model=16, d_ff=24, init="xavier_normal", init_scale=2.0),
    ),
    "bt_uniform": (
        "205c93aa52ae9628",
        BooleanTransformerConfig(d_model=16, d_ff=24, init="uniform", init_scale=2.0),
    ),
    "gpt": ("b15f65ffb0a181af", GPTConfig(vocab_size=10, d_model=16, max_len=8)),
    "lstm": ("060949d2da0b7012", LSTMConfig(d_model=16, n_layers=2)),
    "mlp": ("b935a9ac04e238f3", MLPConfig(n_inputs=6, width=16)),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_existing_inits_draw_the_same_bits(name):
    digest, config = GOLDEN[name]
    assert _digest(build_model(config, seed=3)) == digest  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["boolean_transformer", "gpt", "lstm"])
def test_new_fields_at_their_defaults_leave_run_ids_alone(kind):
    config = small(kind)
    spelled = from_dict(
        type(config), {"init": "default", "init_scale": 10.0, "token_scale": "none"}
    )
    assert config_hash("train", spelled) == config_hash("train", type(config)())
    assert config_hash("train", small(kind, token_scale="sqrt_d")) != config_hash("train", config)


def _baked(model: Any, factor: float) -> nn.Module:
    with torch.no_grad():
        model.token_embedding.weight.mul_(factor)
    return model


@pytest.mark.parametrize(
    "config",
    [
        BooleanTransformerConfig(d_model=16, d_ff=16, max_len=6, readout="eos"),
        BooleanTransformerConfig(d_model=16, d_ff=16, max_len=6, embedding="add", ln="pre"),
        GPTConfig(vocab_size=7, max_len=6, d_model=16),
        LSTMConfig(vocab_size=2, d_model=16, output="scalar"),
    ],
    ids=["bt_concat_eos", "bt_add_pre", "gpt", "lstm"],
)
def test_sqrt_d_token_scale_is_the_cited_embedding_times_sqrt_d(config):
    """Scaling in the forward computes what the volume job's `cited` weights (table × √D) compute."""
    scaled_config = type(config)(**{**vars(config), "token_scale": "sqrt_d"})
    scaled = build_model(scaled_config, seed=7).eval()
    baked = _baked(build_model(config, seed=7), math.sqrt(16)).eval()
    vocab = getattr(config, "vocab_size", 2)
    for batch in (2, 64):  # 64 strings take the Boolean transformer's distinct-row table path
        tokens = torch.randint(0, vocab, (batch, 6), generator=torch.Generator().manual_seed(batch))
        torch.testing.assert_close(scaled(tokens), baked(tokens), rtol=1e-5, atol=1e-5)
        traced, _ = scaled(tokens, trace=True)
        torch.testing.assert_close(traced, baked(tokens), rtol=1e-5, atol=1e-5)
    unscaled = build_model(config, seed=7).eval()
    assert not torch.allclose(unscaled(tokens), scaled(tokens))


@pytest.mark.parametrize(
    ("kind", "values", "says"),
    [
        ("gpt", {"init": "he"}, "init scheme"),
        ("lstm", {"init": "orthogonal"}, "init scheme"),
        ("mlp", {"init_scale": 0.0}, "init_scale=0.0"),
        ("lstm", {"init_scale": float("inf")}, "init_scale=inf"),
        ("gpt", {"token_scale": "d"}, "token_scale"),
        ("boolean_transformer", {"token_scale": "sqrt"}, "token_scale"),
    ],
)
def test_bad_init_values_are_one_line_errors(kind, values, says):
    with pytest.raises(UserError, match=says):
        small(kind, **values)


def test_mlp_has_no_token_scale():
    with pytest.raises(UserError, match="token_scale"):
        from_dict(MLPConfig, {"token_scale": "sqrt_d"})


@pytest.mark.parametrize(
    "config",
    [
        BooleanTransformerConfig(d_model=8, d_ff=8, max_len=5, token_scale="sqrt_d"),
        BooleanTransformerConfig(
            d_model=8, d_ff=8, max_len=5, positions="none", init="uniform", token_scale="sqrt_d"
        ),
        GPTConfig(vocab_size=7, max_len=5, d_model=8, init="xavier_normal", token_scale="sqrt_d"),
    ],
    ids=["bt", "bt-no-positions", "gpt"],
)
def test_scaled_tokens_stack_bit_identically(config):
    """A stacked ensemble (`sweep.ensemble`) of √D-scaled models gives each member its own bits."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # bit-identity holds on one thread (tests/test_ensemble.py)
    try:
        _check_stacked(config)
    finally:
        torch.set_num_threads(threads)


def _check_stacked(config: Any) -> None:
    import copy

    from learnability.sweep.ensemble import stack_models

    models = [build_model(config, seed=s) for s in range(3)]
    alone = [copy.deepcopy(m) for m in models]
    stacked: Any = stack_models(models)
    vocab = getattr(config, "vocab_size", 2)
    tokens = torch.stack(
        [
            torch.randint(0, vocab, (16, 5), generator=torch.Generator().manual_seed(k))
            for k in range(3)
        ]
    )
    out = stacked.run(tokens)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(9))
    out.backward(grad)
    big = dict(stacked.named_parameters())
    for k, model in enumerate(alone):
        mine = model(tokens[k])
        assert torch.equal(mine, out[k])
        mine.backward(grad[k])
        for name, p in model.named_parameters():
            assert p.grad is not None and torch.equal(p.grad, big[name].grad[k]), name
