"""The published Hahn & Rofin model written with torch's own `nn.TransformerEncoder`.

A reference, not a model to train: the equivalence test checks that `BooleanTransformer` in its published
configuration computes exactly this function, and `bench/bench_models.py` races the two.
"""

from __future__ import annotations

import torch
from torch import nn

from learnability.models.boolean_transformer import BooleanTransformer


class StockEncoderModel(nn.Module):
    """Concatenated token (width d/2) and position (width d/2) embeddings, a post-LN ReLU encoder, a
    scalar readout at the last position."""

    def __init__(
        self, d: int = 128, ff: int = 128, layers: int = 2, heads: int = 2, max_len: int = 64
    ) -> None:
        super().__init__()
        self.tok = nn.Embedding(2, d // 2)
        self.pos = nn.Embedding(max_len, d // 2)
        layer = nn.TransformerEncoderLayer(
            d, heads, ff, dropout=0.0, activation="relu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Linear(d, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T) bits -> (B,) scalar output."""
        b, t = x.shape
        h = torch.cat([self.tok(x), self.pos.weight[:t].expand(b, t, -1)], -1)  # (B, T, d)
        return self.out(self.encoder(h)[:, -1]).squeeze(-1)


def copy_stock_weights(stock: StockEncoderModel, model: BooleanTransformer) -> None:
    """Load the stock model's weights into a published-configuration BooleanTransformer."""
    with torch.no_grad():
        model.token_embedding.weight.copy_(stock.tok.weight)
        model.position_embedding.weight[: stock.pos.weight.shape[0]].copy_(stock.pos.weight)
        for ours, theirs in zip(model.blocks, stock.encoder.layers):
            ours.attn.in_proj.weight.copy_(theirs.self_attn.in_proj_weight)
            ours.attn.in_proj.bias.copy_(theirs.self_attn.in_proj_bias)
            ours.attn.out_proj.load_state_dict(theirs.self_attn.out_proj.state_dict())
            ours.mlp.fc.load_state_dict(theirs.linear1.state_dict())
            ours.mlp.proj.load_state_dict(theirs.linear2.state_dict())
            ours.ln1.load_state_dict(theirs.norm1.state_dict())
            ours.ln2.load_state_dict(theirs.norm2.state_dict())
        model.readout.load_state_dict(stock.out.state_dict())
