"""Tests of the Boolean-string transformer: equivalence with torch's encoder, LayerNorm eps = 0, the trace,
shapes, init schemes, causal masking, bad input."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from learnability.errors import UserError
from learnability.models import (
    BooleanTransformer,
    BooleanTransformerConfig,
    build_model,
    count_parameters,
)
from learnability.models.reference import StockEncoderModel, copy_stock_weights

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def test_published_config_equals_torch_transformer_encoder():
    torch.manual_seed(0)
    stock = StockEncoderModel()
    model = BooleanTransformer(BooleanTransformerConfig(max_len=64))
    copy_stock_weights(stock, model)
    x = torch.randint(0, 2, (64, 20))
    stock.train()  # torch's inference fast path is a different kernel; compare the training-mode maths
    expected = stock(x)
    assert torch.allclose(model(x), expected, atol=1e-5)
    traced, trace = model(x, trace=True)
    assert torch.allclose(traced, expected, atol=1e-5)
    assert trace.ln_names == ["layers.0.ln1", "layers.0.ln2", "layers.1.ln1", "layers.1.ln2"]
    # gradients agree too (the last-layer shortcut must not change them)
    expected.sum().backward()
    model(x).sum().backward()
    assert torch.allclose(
        model.layers[0].attn.in_proj.weight.grad,
        stock.encoder.layers[0].self_attn.in_proj_weight.grad,
        atol=1e-4,
    )
    assert count_parameters(model) == count_parameters(stock) - (64 - model.config.max_len) * 64


def test_parameter_names_follow_the_contract():
    model = build_model(BooleanTransformerConfig(ln="pre"), seed=0)
    names = {n for n, _ in model.named_parameters()}
    for expected in [
        "token_embedding.weight",
        "position_embedding.weight",
        "layers.0.attn.in_proj.weight",
        "layers.1.attn.out_proj.bias",
        "layers.0.mlp.fc.weight",
        "layers.1.ln2.bias",
        "final_ln.weight",
        "readout.weight",
    ]:
        assert expected in names
    assert model.positional_parameter_names() == {"position_embedding.weight"}
    qk = model.query_key_matrices()
    assert len(qk) == 2 and len(qk[0]) == 2 and qk[0][0][0].shape == (64, 128)


@pytest.mark.parametrize("ln", ["post", "pre", "none"])
@pytest.mark.parametrize("readout", ["last", "eos", "cls", "all"])
@pytest.mark.parametrize(
    "embedding,positions", [("concat", "learned"), ("add", "sinusoidal"), ("concat", "none")]
)
def test_shapes_and_trace_agree_with_fast_path(ln, readout, embedding, positions):
    cfg = BooleanTransformerConfig(
        d_model=8,
        d_ff=12,
        n_layers=2,
        n_heads=2,
        ln=ln,
        readout=readout,
        embedding=embedding,
        positions=positions,
        max_len=10,
    )
    model = build_model(cfg, seed=1)
    x = torch.randint(0, 2, (5, 7))
    out = model(x)
    assert out.shape == ((5, 7) if readout == "all" else (5,))
    traced, trace = model(x, trace=True)
    assert torch.allclose(out, traced, atol=1e-5)
    t = 7 + (readout in ("eos", "cls"))
    assert len(trace.hidden) == 3 and all(h.shape == (5, t, 8) for h in trace.hidden)
    assert len(trace.attentions) == 2 and trace.attentions[0].shape == (5, 2, t, t)
    assert torch.allclose(trace.attentions[1].sum(-1), torch.ones(5, 2, t))
    n_ln = {"post": 4, "pre": 5, "none": 0}[ln]
    assert len(trace.ln_inputs) == len(trace.ln_normalisers) == len(trace.ln_names) == n_ln
    assert all(v.shape == (5, t) for v in trace.ln_normalisers)
    assert trace.degenerate == 0


def test_trace_normalisers_equal_hand_computation():
    cfg = BooleanTransformerConfig(d_model=4, d_ff=4, n_layers=1, n_heads=1, ln_eps=0.25, max_len=3)
    model = build_model(cfg, seed=3)
    x = torch.tensor([[0, 1, 1], [1, 0, 0]])
    model.requires_grad_(False)
    _, trace = model(x, trace=True)
    # the first LayerNorm's input is embedding + attention, which the trace's hidden[0] and attention give
    h = trace.hidden[0]
    a = trace.attentions[0][:, 0]  # (B, T, T)
    w, b = model.layers[0].attn.in_proj.weight, model.layers[0].attn.in_proj.bias
    v = h @ w[8:].T + b[8:]
    ln1_in = h + model.layers[0].attn.out_proj(a @ v)
    assert torch.allclose(trace.ln_inputs[0], ln1_in, atol=1e-6)
    for row in range(2):
        for pos in range(3):
            values = [float(z) for z in trace.ln_inputs[0][row, pos]]
            mean = sum(values) / 4
            var = sum((z - mean) ** 2 for z in values) / 4
            assert math.isclose(
                float(trace.ln_normalisers[0][row, pos]), 1 / math.sqrt(var + 0.25), rel_tol=1e-5
            )
    # attention weights: softmax of q·k / √d by hand at one query
    q, k = h @ w[:4].T + b[:4], h @ w[4:8].T + b[4:8]
    scores = [float(q[0, 2] @ k[0, j]) / 2 for j in range(3)]
    total = sum(math.exp(s) for s in scores)
    assert all(
        math.isclose(float(a[0, 2, j]), math.exp(scores[j]) / total, rel_tol=1e-5) for j in range(3)
    )


def test_eps_zero_constant_rows_do_not_crash_and_are_counted():
    cfg = BooleanTransformerConfig(
        d_model=8,
        d_ff=8,
        n_heads=2,
        ln_eps=0.0,
        ln="pre",
        embedding="add",
        positions="none",
        max_len=6,
    )
    model = build_model(cfg, seed=0)
    with (
        torch.no_grad()
    ):  # token 0 embeds to a constant row: every pre-LN input row of the string is constant
        model.token_embedding.weight[0] = 0.7
    zeros = torch.zeros(3, 6, dtype=torch.long)
    out, trace = model(zeros, trace=True)
    assert torch.isfinite(out).all()
    assert trace.degenerate >= 3 * 6
    assert (trace.ln_normalisers[0] == 0).all()
    # gradients stay finite through the degenerate rows
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    # the published model at eps = 0 on the all-zeros string: finite, and the fast path agrees
    model = build_model(
        BooleanTransformerConfig(ln_eps=0.0, init="uniform", init_scale=10.0, readout="eos"), seed=0
    )
    x = torch.zeros(4, 12, dtype=torch.long)
    fast = model(x)
    slow, trace = model(x, trace=True)
    assert torch.isfinite(fast).all() and torch.allclose(fast, slow, rtol=1e-4, atol=1e-3)
    assert trace.degenerate == 0


def test_eps_zero_degenerate_row_outputs_the_bias():
    from learnability.models.layers import LayerNorm
    from learnability.models.trace import Trace

    ln = LayerNorm(5, eps=0.0, name="ln")
    with torch.no_grad():
        ln.bias.copy_(torch.arange(5.0))
    x = torch.tensor([[[0.3] * 5, [1.0, 2.0, 3.0, 4.0, 5.0]]])
    trace = Trace()
    y = ln(x, trace)
    assert torch.equal(y[0, 0], torch.arange(5.0))
    assert torch.allclose(
        y[0, 1], nn.functional.layer_norm(x[0, 1], (5,), eps=0.0) + torch.arange(5.0)
    )
    assert trace.degenerate == 1 and trace.ln_normalisers[0][0, 0] == 0
    assert torch.equal(ln(x), y)  # untraced path, same rule


@pytest.mark.parametrize("scheme,scale", [("uniform", 3.0), ("gaussian", 2.0)])
def test_uniform_and_gaussian_init(scheme, scale):
    model = build_model(
        BooleanTransformerConfig(init=scheme, init_scale=scale), seed=0
    ).requires_grad_(False)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    if scheme == "uniform":
        assert flat.abs().max() <= scale and flat.abs().max() > 0.99 * scale
        assert abs(float(flat.std()) - scale / math.sqrt(3)) < 0.02 * scale
    else:
        assert (
            abs(float(flat.std()) - scale) < 0.02 * scale and abs(float(flat.mean())) < 0.02 * scale
        )
    # same seed, same model; different seed, different model
    again = build_model(BooleanTransformerConfig(init=scheme, init_scale=scale), seed=0)
    other = build_model(BooleanTransformerConfig(init=scheme, init_scale=scale), seed=1)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters()))
    assert not torch.equal(model.readout.weight, other.readout.weight)


@pytest.mark.parametrize("scheme", ["xavier_uniform", "xavier_normal", "default"])
def test_xavier_and_default_init(scheme):
    model = build_model(
        BooleanTransformerConfig(init=scheme, d_model=128, d_ff=256), seed=0
    ).requires_grad_(False)
    fc = model.layers[0].mlp.fc.weight  # (256, 128)
    q = model.layers[0].attn.in_proj.weight[:128]
    if scheme == "default":
        assert fc.abs().max() <= 1 / math.sqrt(128)  # kaiming-uniform(a=√5) bound = 1/√fan_in
        assert abs(float(model.token_embedding.weight.std()) - 1.0) < 0.2
        assert float(model.layers[0].attn.in_proj.bias.abs().max()) == 0
        return
    std = math.sqrt(2 / (128 + 256))
    assert abs(float(fc.std()) - std) < 0.05 * std
    assert abs(float(q.std()) - math.sqrt(2 / 256)) < 0.05 * math.sqrt(
        2 / 256
    )  # q alone is (128, 128)
    if scheme == "xavier_uniform":
        assert fc.abs().max() <= math.sqrt(3) * std + 1e-6
    assert float(model.layers[0].mlp.fc.bias.abs().max()) == 0
    assert torch.equal(model.layers[0].ln1.weight, torch.ones(128))
    pre = build_model(BooleanTransformerConfig(init=scheme, ln="pre", d_model=16, d_ff=16), seed=0)
    assert torch.equal(pre.final_ln.weight, torch.ones(16)) and torch.equal(
        pre.final_ln.bias, torch.zeros(16)
    )


def test_causal_mask_and_bidirectional():
    x = torch.randint(0, 2, (4, 9))
    y = x.clone()
    y[:, 6] = 1 - y[:, 6]
    causal = build_model(
        BooleanTransformerConfig(d_model=16, d_ff=16, causal=True, readout="all"), seed=0
    )
    a, b = causal(x), causal(y)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-6) and not torch.allclose(a[:, 6:], b[:, 6:])
    _, trace = causal(x, trace=True)
    assert torch.all(trace.attentions[0].triu(1) == 0)
    bidirectional = build_model(
        BooleanTransformerConfig(d_model=16, d_ff=16, readout="all"), seed=0
    )
    assert not torch.allclose(bidirectional(x)[:, :6], bidirectional(y)[:, :6])
    # a causal CLS readout sees only the CLS token: it cannot depend on the input
    cls = build_model(
        BooleanTransformerConfig(d_model=16, d_ff=16, causal=True, readout="cls"), seed=0
    )
    assert torch.allclose(cls(x), cls(y)) and torch.allclose(
        cls(x), cls(x, trace=True)[0], atol=1e-6
    )


def test_sinusoidal_positions_generalise_in_length_learned_refuse():
    sin = build_model(
        BooleanTransformerConfig(d_model=16, d_ff=16, positions="sinusoidal", max_len=8), seed=0
    )
    assert sin(torch.randint(0, 2, (2, 40))).shape == (2,)
    assert sin.positional_parameter_names() == set()
    learned = build_model(
        BooleanTransformerConfig(d_model=16, d_ff=16, max_len=8, readout="eos"), seed=0
    )
    assert learned(torch.randint(0, 2, (2, 8))).shape == (2,)
    with pytest.raises(UserError, match="max_len=8"):
        learned(torch.randint(0, 2, (2, 9)))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"d_model": 10, "n_heads": 3}, "does not divide"),
        ({"d_model": 9, "n_heads": 1}, "even d_model"),
        ({"ln_eps": -1e-5}, "ln_eps"),
        ({"init": "xavier"}, "did you mean"),
        ({"activation": "tanh"}, "activation"),
        ({"ln": "middle"}, "ln placement"),
        ({"readout": "first"}, "readout"),
        ({"n_layers": 0}, "n_layers"),
        ({"dropout": 1.5}, "dropout"),
    ],
)
def test_bad_configs_raise_user_error(kwargs, match):
    with pytest.raises(UserError, match=match):
        BooleanTransformerConfig(**kwargs)


def test_bad_tokens_raise_user_error():
    model = build_model(BooleanTransformerConfig(d_model=8, d_ff=8, max_len=8), seed=0)
    for bad, match in [
        (torch.tensor([[0, 1, 2]]), "token ids"),
        (torch.tensor([[0, -1]]), "token ids"),
        (torch.zeros(3, dtype=torch.long), "shape"),
        (torch.zeros(2, 3), "dtype"),
        (torch.zeros(2, 0, dtype=torch.long), "shape"),
    ]:
        with pytest.raises(UserError, match=match):
            model(bad)
    with pytest.raises(UserError, match="arch"):
        build_model({"arch": "boolean_transformer"})


@pytest.mark.parametrize("device", DEVICES)
def test_runs_on_device_and_on_all_inputs_at_once(device):
    model = build_model(
        BooleanTransformerConfig(d_model=16, d_ff=16, readout="eos"), seed=0, device=device
    )
    n = 12
    bits = (
        torch.arange(2**n, device=device)[:, None] >> torch.arange(n, device=device)
    ) & 1  # (2^n, n), x_0 = LSB
    with torch.no_grad():
        out = model(bits)
        traced, _ = model(bits, trace=True)
    assert out.shape == (2**n,) and out.device.type == torch.device(device).type
    assert torch.allclose(out, traced, atol=1e-4)


def test_named_init_overrides_keep_every_other_parameter():
    # ln_init / bias_init / readout_bias_init override the scheme after it drew everything: the other
    # parameters are bit-identical, and the defaults ("scheme") are the historical behaviour
    base = dict(n_layers=2, n_heads=2, d_model=8, d_ff=16, readout="eos", init="uniform", max_len=6)
    drawn = dict(build_model(BooleanTransformerConfig(**base), seed=3).named_parameters())
    public = dict(
        build_model(
            BooleanTransformerConfig(
                **base, ln_init="unit", bias_init="zero", readout_bias_init="zero"
            ),
            seed=3,
        ).named_parameters()
    )
    for name, p in public.items():
        if ".ln" in name:
            assert torch.all(p == (1.0 if name.endswith("weight") else 0.0)), name
        elif name.endswith("bias"):
            assert torch.all(p == 0), name
        else:
            assert torch.equal(p, drawn[name]), name
    assert (
        drawn["layers.0.ln1.weight"].abs().max() > 1
    )  # the scheme draws LayerNorm from U[−10, 10]
    assert drawn["readout.bias"].abs().item() > 0
    only_readout = build_model(
        BooleanTransformerConfig(**base, readout_bias_init="zero"), seed=3
    ).state_dict()
    assert only_readout["readout.bias"].item() == 0
    assert torch.equal(only_readout["layers.0.ln1.bias"], drawn["layers.0.ln1.bias"])
    with pytest.raises(UserError, match="ln_init"):
        BooleanTransformerConfig(ln_init="ones")


@pytest.mark.parametrize("ln", ["post", "pre"])
@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"readout": "eos", "embedding": "add"},
        {"readout": "cls", "positions": "sinusoidal"},
        {"readout": "all", "causal": True},
        {"positions": "alibi"},
        {"positions": "none", "n_layers": 1},
        {"n_layers": 3, "causal": True},
    ],
)
def test_fast_paths_compute_the_traced_function_and_its_gradients(ln, extra):
    # a batch large enough for the distinct-row first layer (table of (token, position) rows) and,
    # unless every position is read, the one-query last layer in the input space
    cfg = BooleanTransformerConfig(d_model=8, d_ff=12, n_heads=2, max_len=6, ln=ln, **extra)
    model = build_model(cfg, seed=2)
    x = torch.randint(0, 2, (32, 6), generator=torch.Generator().manual_seed(0))
    assert model._table_pays(x) and not model._table_pays(x[:1])
    fast = model(x)
    traced, _ = model(x, trace=True)
    assert torch.allclose(fast, traced, atol=1e-5)
    grads = []
    for out in (fast, traced):
        model.zero_grad()
        (out * torch.linspace(-1, 1, out.numel()).view(out.shape)).sum().backward(retain_graph=True)
        grads.append({n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys()
    for name in grads[0]:
        assert torch.allclose(grads[0][name], grads[1][name], atol=1e-5), name
    # the small-batch path (no table) gives the same function too
    assert torch.allclose(model(x[:1]), fast[:1], atol=1e-5)
