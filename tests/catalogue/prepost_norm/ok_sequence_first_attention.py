"""Correct, written differently: (seq, batch, d_model) attention with transposes, residual units.

nn.MultiheadAttention keeps its default batch_first=False, so the block transposes to
(seq, batch, d_model) around it; the two sub-blocks reuse the residual wrappers.
"""

import torch.nn.functional as F
from torch import nn

EXPECT = "pass"


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
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        def attend(h):
            s = h.transpose(0, 1)  # (seq, batch, d_model), as batch_first=False expects
            out = self.self_attn(
                s,
                s,
                s,
                attn_mask=src_mask,
                key_padding_mask=src_key_padding_mask,
                need_weights=False,
            )[0]
            return self.dropout1(out.transpose(0, 1))

        def feed_forward(h):
            return self.dropout2(self.linear2(self.dropout(F.relu(self.linear1(h)))))

        if self.norm_first:
            x = x + attend(self.norm1(x))
            return x + feed_forward(self.norm2(x))
        x = self.norm1(x + attend(x))
        return self.norm2(x + feed_forward(x))
