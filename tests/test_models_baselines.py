"""Tests of the LSTM and MLP baselines: shapes, interface, init, bad input, and that they can fit a tiny task."""

from __future__ import annotations

import pytest
import torch

from learnability.errors import UserError
from learnability.models import LSTMConfig, MLPConfig, build_model, count_parameters

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_lstm_shapes_both_outputs(device):
    lm = build_model(LSTMConfig(vocab_size=9, d_model=16, n_layers=2), seed=0, device=device)
    x = torch.randint(0, 9, (4, 7), device=device)
    assert lm(x).shape == (4, 7, 9)
    out, trace = lm(x, trace=True)
    assert out.shape == (4, 7, 9) and trace.hidden[-1].shape == (4, 7, 16) and trace.degenerate == 0
    scalar = build_model(
        LSTMConfig(vocab_size=2, d_model=16, output="scalar"), seed=0, device=device
    )
    assert scalar(torch.randint(0, 2, (4, 30), device=device)).shape == (4,)
    assert {n.split(".")[0] for n, _ in scalar.named_parameters()} == {
        "token_embedding",
        "lstm",
        "readout",
    }
    assert "unembedding.weight" in dict(lm.named_parameters())
    assert lm.positional_parameter_names() == set()


def test_lstm_is_causal():
    lm = build_model(LSTMConfig(vocab_size=5, d_model=8), seed=0)
    x = torch.randint(0, 5, (2, 10))
    y = x.clone()
    y[:, 6] = (y[:, 6] + 1) % 5
    assert torch.allclose(lm(x)[:, :6], lm(y)[:, :6]) and not torch.allclose(
        lm(x)[:, 6:], lm(y)[:, 6:]
    )


@pytest.mark.parametrize("device", DEVICES)
def test_mlp_shapes_inputs_and_parameters(device):
    mlp = build_model(MLPConfig(n_inputs=6, width=10, depth=3), seed=0, device=device)
    bits = torch.randint(0, 2, (5, 6), device=device)
    out, trace = mlp(bits, trace=True)
    assert out.shape == (5,) and len(trace.hidden) == 4
    assert torch.equal(trace.hidden[0], 2 * bits.float() - 1)  # ±1 encoding
    assert count_parameters(mlp) == 6 * 10 + 10 + 2 * (10 * 10 + 10) + 10 + 1
    mlp.layers[0].requires_grad_(False)
    assert count_parameters(mlp, trainable_only=True) == count_parameters(mlp) - 70
    plain = build_model(MLPConfig(n_inputs=6, inputs="01"), seed=0)
    assert torch.equal(plain(bits.cpu(), trace=True)[1].hidden[0], bits.cpu().float())


def test_mlp_fits_xor_of_two_bits():
    torch.manual_seed(0)
    mlp = build_model(MLPConfig(n_inputs=6, width=32, depth=1), seed=0)
    bits = (torch.arange(64)[:, None] >> torch.arange(6)) & 1
    target = -(2.0 * bits[:, 1] - 1) * (2.0 * bits[:, 4] - 1)  # sparse XOR y = −x_1 x_4 in ±1
    opt = torch.optim.Adam(mlp.parameters(), lr=1e-2)
    for _ in range(300):
        loss = torch.nn.functional.mse_loss(mlp(bits), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 1e-2


def test_bad_input_raises_user_error():
    mlp = build_model(MLPConfig(n_inputs=4), seed=0)
    with pytest.raises(UserError, match="n_inputs=4"):
        mlp(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(UserError, match="token ids"):
        mlp(torch.full((2, 4), 2))
    with pytest.raises(UserError, match="width"):
        MLPConfig(width=0)
    with pytest.raises(UserError, match="did you mean"):
        LSTMConfig(output="scalars")
    lm = build_model(LSTMConfig(vocab_size=3), seed=0)
    with pytest.raises(UserError, match="token ids"):
        lm(torch.full((1, 2), 3))
