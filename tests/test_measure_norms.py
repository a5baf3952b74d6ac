"""Parameter norm without positional parameters; the Lipschitz constant C by hand."""

from __future__ import annotations

import math

import pytest
import torch

from learnability.errors import UserError
from learnability.measure import lipschitz_constant, parameter_norm
from learnability.models import BooleanTransformerConfig, MLPConfig, build_model


def test_parameter_norm_excludes_positions():
    model = build_model(
        BooleanTransformerConfig(n_layers=1, n_heads=1, d_model=8, d_ff=8, max_len=4), seed=0
    )
    total = sum(
        p.pow(2).sum().item()
        for n, p in model.named_parameters()
        if n != "position_embedding.weight"
    )
    assert parameter_norm(model) == pytest.approx(math.sqrt(total), rel=1e-6)
    with torch.no_grad():
        model.position_embedding.weight.mul_(100)
    assert parameter_norm(model) == pytest.approx(math.sqrt(total), rel=1e-6)
    assert parameter_norm(model, exclude_positional=False) > 10 * parameter_norm(model)


def test_lipschitz_by_hand():
    d, heads = 8, 2
    model = build_model(
        BooleanTransformerConfig(n_layers=3, n_heads=heads, d_model=d, d_ff=8, max_len=4), seed=1
    )
    dh = d // heads
    sums = [0.0] * heads
    for layer in model.layers[1:]:  # the first layer does not enter C
        w = layer.attn.in_proj.weight.detach().double()
        for h in range(heads):
            q = w[h * dh : (h + 1) * dh]
            k = w[d + h * dh : d + (h + 1) * dh]
            sums[h] += torch.linalg.svdvals(k.T @ q)[0].item() ** 2
    log_c = 4 * d * max(sums)
    got = lipschitz_constant(model)
    assert got["log_C"] == pytest.approx(log_c, rel=1e-9)
    assert got["log10_C"] == pytest.approx(log_c / math.log(10), rel=1e-9)


def test_one_layer_has_c_one_and_no_attention_is_user_error():
    one = build_model(
        BooleanTransformerConfig(n_layers=1, n_heads=1, d_model=4, d_ff=4, max_len=4), seed=0
    )
    assert lipschitz_constant(one)["C"] == 1.0
    mlp = build_model(MLPConfig(), seed=0)
    with pytest.raises(UserError):
        lipschitz_constant(mlp)
