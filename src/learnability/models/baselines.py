"""Baselines with the transformers' interface: an LSTM (language model or scalar readout) and an MLP on bits.

`LSTM`: token embedding -> `lstm` (n_layers, batch_first) -> `unembedding` to V logits per position
(output="tokens": (B, T, V)) or `readout` to one scalar at the last position (output="scalar": (B,)).
`MLP`: the bits of a Boolean string (B, n), mapped to ±1 (x -> 2x − 1, the ±1 convention of the
sparse-XOR study) or kept as 0/1, through `depth` hidden ReLU layers of `width` -> `readout` scalar (B,).
Both take the init schemes every model kind shares (`init`, `init_scale`: `learnability.models.init`;
default PyTorch's), the LSTM also `token_scale`.
Neither has LayerNorms or attention; their trace carries the hidden states only. Neither has positional
parameters (the LSTM is length-agnostic; the MLP needs exactly `n_inputs` bits).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import Tensor, nn

from learnability.config import HASH_OMIT_DEFAULT
from learnability.errors import UserError, check_choice
from learnability.models.init import TOKEN_SCALES, check_init, scheme_init, token_factor
from learnability.models.layers import check_tokens
from learnability.models.trace import Trace


def _positive(config: object, *names: str) -> None:
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UserError(f"{name}={value!r} is not allowed; it must be a positive integer")


# The init fields every model kind shares (`learnability.models.init`); new here, so left out of run
# ids at their defaults: runs stored before they existed keep their ids.
InitName = Literal["default", "pytorch", "uniform", "gaussian", "xavier_uniform", "xavier_normal"]


@dataclass
class LSTMConfig:
    """An `LSTM`: width, depth, and per-token logits ("tokens") or one scalar ("scalar")."""

    arch: Literal["lstm"] = "lstm"  # an LSTM baseline
    vocab_size: int = 2  # input tokens
    d_model: int = 128  # embedding and hidden width
    n_layers: int = 1  # stacked LSTM layers
    output: Literal["tokens", "scalar"] = "tokens"  # logits per token, or one scalar per string
    dropout: float = 0.0  # dropout between layers (0 = none)
    # initialisation scheme (`learnability.models.init`): PyTorch's (default = pytorch), uniform /
    # gaussian of scale init_scale, Xavier (per gate)
    init: InitName = field(default="default", metadata=HASH_OMIT_DEFAULT)
    # B of uniform [-B, B] / σ of gaussian
    init_scale: float = field(default=10.0, metadata=HASH_OMIT_DEFAULT)
    # "sqrt_d": the token embedding times √d_model in the forward (Bhattamishra et al.'s code)
    token_scale: Literal["none", "sqrt_d"] = field(default="none", metadata=HASH_OMIT_DEFAULT)

    def __post_init__(self) -> None:
        if self.init == "pytorch":  # PyTorch's init is this model's default: one name, one run id
            self.init = "default"
        self.validate()

    def validate(self) -> None:
        _positive(self, "vocab_size", "d_model", "n_layers")
        check_choice("LSTM output", self.output, ("tokens", "scalar"))
        check_init(self.init, self.init_scale)
        check_choice("token_scale", self.token_scale, TOKEN_SCALES)
        if not 0 <= self.dropout < 1:
            raise UserError(f"dropout={self.dropout!r} is not allowed; it must be in [0, 1)")


class LSTM(nn.Module):
    """tokens (B, T) -> (B, T, V) logits (output="tokens") or (B,) (output="scalar")."""

    def __init__(self, config: LSTMConfig, generator: torch.Generator | None = None) -> None:
        super().__init__()
        config.validate()
        self.config = c = config
        self.token_embedding = nn.Embedding(c.vocab_size, c.d_model)
        self.token_factor = token_factor(c.token_scale, c.d_model)  # None: unscaled
        self.lstm = nn.LSTM(
            c.d_model,
            c.d_model,
            c.n_layers,
            batch_first=True,
            dropout=c.dropout if c.n_layers > 1 else 0.0,
        )
        if c.output == "tokens":
            self.unembedding = nn.Linear(c.d_model, c.vocab_size)
        else:
            self.readout = nn.Linear(c.d_model, 1)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """PyTorch's default init (U(±1/√D) for the LSTM and Linear, N(0,1) embeddings), then the
        configured scheme if it is another (`learnability.models.init`), from `generator`."""
        bound = self.config.d_model**-0.5
        for name, p in self.named_parameters():
            if name.startswith("token_embedding"):
                nn.init.normal_(p, generator=generator)
            else:
                nn.init.uniform_(p, -bound, bound, generator=generator)
        if self.config.init != "default":
            scheme_init(self, self.config.init, self.config.init_scale, generator)

    def positional_parameter_names(self) -> set[str]:
        return set()

    def forward(self, tokens: Tensor, trace: bool = False) -> Tensor | tuple[Tensor, Trace]:
        check_tokens(tokens, self.config.vocab_size)
        x = self.token_embedding(tokens)  # (B, T, D)
        if self.token_factor is not None:
            x = x * self.token_factor
        h, _ = self.lstm(x)  # (B, T, D)
        out = (
            self.unembedding(h)
            if self.config.output == "tokens"
            else self.readout(h[:, -1]).squeeze(-1)
        )
        return (out, Trace(hidden=[x, h])) if trace else out


@dataclass
class MLPConfig:
    """An `MLP` on `n_inputs` bits: `depth` hidden ReLU layers of `width`, ±1 or 0/1 inputs."""

    arch: Literal["mlp"] = "mlp"  # a ReLU MLP on the n bits
    n_inputs: int = 20  # bits read (must equal task.n)
    width: int = 128  # hidden width
    depth: int = 2  # hidden layers
    inputs: Literal["pm1", "01"] = "pm1"  # bits fed as ±1 or as 0/1
    # initialisation scheme (`learnability.models.init`): PyTorch's (default = pytorch), uniform /
    # gaussian of scale init_scale, Xavier. The MLP reads bits, not embeddings: no token_scale
    init: InitName = field(default="default", metadata=HASH_OMIT_DEFAULT)
    # B of uniform [-B, B] / σ of gaussian
    init_scale: float = field(default=10.0, metadata=HASH_OMIT_DEFAULT)

    def __post_init__(self) -> None:
        if self.init == "pytorch":  # PyTorch's init is this model's default: one name, one run id
            self.init = "default"
        self.validate()

    def validate(self) -> None:
        _positive(self, "n_inputs", "width", "depth")
        check_choice("MLP input encoding", self.inputs, ("pm1", "01"))
        check_init(self.init, self.init_scale)


class MLP(nn.Module):
    """bits (B, n) -> (B,). Layers are `layers.{i}` (Linear), then `readout`."""

    def __init__(self, config: MLPConfig, generator: torch.Generator | None = None) -> None:
        super().__init__()
        config.validate()
        self.config = c = config
        widths = [c.n_inputs] + [c.width] * c.depth
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))
        self.readout = nn.Linear(widths[-1], 1)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """PyTorch's default Linear init (U(±1/√fan_in) for weight and bias), then the configured
        scheme if it is another (`learnability.models.init`), from `generator`."""
        for layer in [*self.layers, self.readout]:
            bound = layer.in_features**-0.5
            nn.init.uniform_(layer.weight, -bound, bound, generator=generator)
            nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
        if self.config.init != "default":
            scheme_init(self, self.config.init, self.config.init_scale, generator)

    def positional_parameter_names(self) -> set[str]:
        return set()

    def forward(self, tokens: Tensor, trace: bool = False) -> Tensor | tuple[Tensor, Trace]:
        check_tokens(tokens, 2)
        if tokens.shape[1] != self.config.n_inputs:
            raise UserError(
                f"input length {tokens.shape[1]} does not match the MLP's n_inputs={self.config.n_inputs}"
            )
        x = tokens.float()
        if self.config.inputs == "pm1":
            x = 2 * x - 1
        hidden = [x]
        for layer in self.layers:
            x = torch.relu(layer(x))
            hidden.append(x)
        out = self.readout(x).squeeze(-1)
        return (out, Trace(hidden=hidden)) if trace else out
