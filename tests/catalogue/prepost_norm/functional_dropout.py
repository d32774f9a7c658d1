"""Mistake: calls F.dropout with each module's p, not the dropout modules themselves, so hooks
and a swapped-in dropout layer never act on them (the values are torch's)."""

import torch
import torch.nn.functional as F
from torch import nn

EXPECT = "test_dropout_placement"
SAYS = "forward called none of the modules dropout1, dropout and dropout2"


class PreNormResidual(nn.Module):
    def __init__(self, d_model, sublayer):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.sublayer = sublayer

    def forward(self, x):
        return x + self.sublayer(self.norm(x))


class PostNormResidual(nn.Module):
    def __init__(self, d_model, sublayer):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.sublayer = sublayer

    def forward(self, x):
        return self.norm(x + self.sublayer(x))


class TransformerEncoderBlock(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
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

    def _sa(self, q, src_mask, src_key_padding_mask, is_causal):
        out, _ = self.self_attn(
            q,
            q,
            q,
            attn_mask=src_mask,
            key_padding_mask=src_key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )
        return F.dropout(out, p=self.dropout1.p, training=self.training)

    def _ff(self, h):
        h = F.dropout(F.relu(self.linear1(h)), p=self.dropout.p, training=self.training)
        return F.dropout(self.linear2(h), p=self.dropout2.p, training=self.training)

    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = torch.add(x, self._ff(self.norm2(x)))
        else:
            x = self.norm1(x + self._sa(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff(x))
        return x
