"""Reference solution: Pre-LN vs Post-LN residual wiring and a Transformer encoder block."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class PreNormResidual(nn.Module):
    """``x + sublayer(norm(x))``: the residual path is never normalized (GPT-2, LLaMA, ViT)."""

    def __init__(self, d_model: int, sublayer: nn.Module) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.sublayer = sublayer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.sublayer(self.norm(x))


class PostNormResidual(nn.Module):
    """``norm(x + sublayer(x))``: the original Transformer (Vaswani et al. 2017), BERT."""

    def __init__(self, d_model: int, sublayer: nn.Module) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.sublayer = sublayer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + self.sublayer(x))


class TransformerEncoderBlock(nn.Module):
    """Self-attention + ReLU feed-forward block, each sublayer wrapped in a residual + LayerNorm.

    Submodule names match ``nn.TransformerEncoderLayer(..., batch_first=True)``, so its
    ``state_dict`` loads as is. Inputs are (batch, seq, d_model).
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        src_key_padding_mask: torch.Tensor | None = None,
        is_causal: bool = False,
    ) -> torch.Tensor:
        if self.norm_first:  # Pre-LN: x + f(norm(x)); needs a final norm after the last block
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:  # Post-LN: norm(x + f(x))
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(
        self,
        x: torch.Tensor,
        attn_mask: torch.Tensor | None,
        key_padding_mask: torch.Tensor | None,
        is_causal: bool,
    ) -> torch.Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear2(self.dropout(F.relu(self.linear1(x))))
        return self.dropout2(x)
