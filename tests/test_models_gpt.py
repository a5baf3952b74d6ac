"""Tests of the GPT decoder (Zhong & Andreas recipe): equivalence with torch's pre-LN layer, init, causality,
trace, bad input."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from learnability.errors import UserError
from learnability.models import GPT, GPTConfig, build_model, count_parameters

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def test_equals_torch_pre_ln_causal_encoder_with_tanh_gelu():
    cfg = GPTConfig(vocab_size=11, max_len=9, n_layers=2, n_heads=4, d_model=32)
    model = build_model(cfg, seed=0)
    layers = [
        nn.TransformerEncoderLayer(
            32,
            4,
            128,
            dropout=0.0,
            activation=lambda x: F.gelu(x, approximate="tanh"),
            batch_first=True,
            norm_first=True,
        )
        for _ in range(2)
    ]
    with torch.no_grad():
        for ours, theirs in zip(model.layers, layers):
            theirs.self_attn.in_proj_weight.copy_(ours.attn.in_proj.weight)
            theirs.self_attn.in_proj_bias.copy_(ours.attn.in_proj.bias)
            theirs.self_attn.out_proj.load_state_dict(ours.attn.out_proj.state_dict())
            theirs.linear1.load_state_dict(ours.mlp.fc.state_dict())
            theirs.linear2.load_state_dict(ours.mlp.proj.state_dict())
            theirs.norm1.load_state_dict(ours.ln1.state_dict())
            theirs.norm2.load_state_dict(ours.ln2.state_dict())
    x = torch.randint(0, 11, (6, 9))
    h = model.token_embedding(x) + model.position_embedding.weight[:9]
    mask = nn.Transformer.generate_square_subsequent_mask(9)
    for layer in layers:
        h = layer(h, src_mask=mask, is_causal=True)
    expected = model.unembedding(model.final_ln(h))
    assert torch.allclose(model(x), expected, atol=1e-5)
    logits, trace = model(x, trace=True)
    assert torch.allclose(logits, expected, atol=1e-5)
    assert trace.ln_names == [
        "layers.0.ln1",
        "layers.0.ln2",
        "layers.1.ln1",
        "layers.1.ln2",
        "final_ln",
    ]
    assert len(trace.hidden) == 3 and trace.hidden[-1].shape == (6, 9, 32)
    assert trace.attentions[0].shape == (6, 4, 9, 9)
    assert (
        count_parameters(model)
        == 11 * 32
        + 9 * 32
        + 2 * (4 * 32 * 32 + 4 * 32 + 2 * 32 * 128 + 128 + 32 + 4 * 32)
        + 2 * 32
        + 32 * 11
        + 11
    )


def test_initialisation_stds():
    cfg = GPTConfig(vocab_size=256, max_len=64, n_layers=4, d_model=256)
    model = build_model(cfg, seed=0).requires_grad_(False)
    params = dict(model.named_parameters())
    out_std = 0.02 / math.sqrt(8)
    for name, p in params.items():
        if p.dim() >= 2:
            expected = (
                out_std if name.endswith(("attn.out_proj.weight", "mlp.proj.weight")) else 0.02
            )
            assert abs(float(p.std()) - expected) < 0.08 * expected, name
            assert abs(float(p.mean())) < 0.1 * expected, name
        elif "ln" in name and name.endswith("weight"):
            assert torch.equal(p, torch.ones_like(p)), name
        else:
            assert torch.equal(p, torch.zeros_like(p)), name
    assert "unembedding.weight" in params and "final_ln.bias" in params
    assert model.unembedding.weight.data_ptr() != model.token_embedding.weight.data_ptr()  # untied
    assert model.positional_parameter_names() == {"position_embedding.weight"}


def test_causal_later_tokens_do_not_change_earlier_logits():
    model = build_model(GPTConfig(vocab_size=7, max_len=12, d_model=16), seed=1)
    x = torch.randint(0, 7, (3, 12))
    y = x.clone()
    y[:, 8:] = (y[:, 8:] + 1) % 7
    a, b = model(x), model(y)
    assert torch.allclose(a[:, :8], b[:, :8], atol=1e-6)
    assert not torch.allclose(a[:, 8:], b[:, 8:])
    _, trace = model(x, trace=True)
    assert all(torch.all(att.triu(1) == 0) for att in trace.attentions)


def test_seed_determines_init_and_leaves_global_rng_alone():
    state = torch.random.get_rng_state()
    a = build_model(GPTConfig(vocab_size=5, max_len=4, d_model=8), seed=3)
    assert torch.equal(state, torch.random.get_rng_state())
    b = build_model(GPTConfig(vocab_size=5, max_len=4, d_model=8), seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_bad_input_raises_user_error():
    model = build_model(GPTConfig(vocab_size=5, max_len=4, d_model=8), seed=0)
    with pytest.raises(UserError, match="max_len=4"):
        model(torch.zeros(1, 5, dtype=torch.long))
    with pytest.raises(UserError, match="token ids"):
        model(torch.full((1, 3), 5))
    with pytest.raises(UserError, match="does not divide"):
        GPTConfig(d_model=10, n_heads=4)
    with pytest.raises(UserError, match="ln_eps"):
        GPTConfig(ln_eps=-1.0)


@pytest.mark.parametrize("device", DEVICES)
def test_runs_on_device(device):
    model = build_model(GPTConfig(vocab_size=5, max_len=6, d_model=8), seed=0, device=device)
    assert isinstance(model, GPT)
    out = model(torch.randint(0, 5, (2, 6), device=device))
    assert out.shape == (2, 6, 5) and out.device.type == torch.device(device).type


@pytest.mark.parametrize("positions", [[0], [3], [1, 4], [0, 2, 5, 6]])
@pytest.mark.parametrize("layers", [1, 2])
def test_asking_some_positions_gives_the_full_forwards_rows(positions, layers):
    # the last block asks only `at`: its rows must be the full forward's, and so must their gradients
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, max_len=7, n_layers=layers, n_heads=2, d_model=16))
    tokens = torch.randint(0, 11, (5, 7))
    at = torch.tensor(positions)
    full = model(tokens)
    some = model(tokens, at=at)
    assert some.shape == (5, len(positions), 11)
    torch.testing.assert_close(some, full[:, positions], rtol=1e-5, atol=1e-6)
    emb = model.token_embedding.weight
    (g_full,) = torch.autograd.grad(full[:, positions].square().sum(), emb)
    (g_some,) = torch.autograd.grad(model(tokens, at=at).square().sum(), emb)
    torch.testing.assert_close(g_some, g_full, rtol=1e-5, atol=1e-6)


def test_asking_positions_refuses_a_trace():
    model = GPT(GPTConfig(vocab_size=5, max_len=4, n_layers=1, n_heads=1, d_model=8))
    with pytest.raises(ValueError, match="trace"):
        model(torch.zeros(2, 4, dtype=torch.long), trace=True, at=torch.tensor([1]))
