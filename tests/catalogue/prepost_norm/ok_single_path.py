"""Correct, written differently: one code path for both wirings, need_weights left on."""

import torch
from torch import nn

EXPECT = "pass"


class PreNormResidual(nn.Module):
    def __init__(self, d_model, sublayer):
        super().__init__()
        self.sublayer = sublayer
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        update = self.sublayer(self.norm(x))
        return update + x


class PostNormResidual(nn.Module):
    def __init__(self, d_model, sublayer):
        super().__init__()
        self.sublayer = sublayer
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.norm(self.sublayer(x) + x)


class TransformerEncoderBlock(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.dropout, self.dropout1, self.dropout2 = (nn.Dropout(dropout) for _ in range(3))

    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        def attend(h):
            out, _ = self.self_attn(
                h, h, h, attn_mask=src_mask, key_padding_mask=src_key_padding_mask
            )
            return self.dropout1(out)

        def feed_forward(h):
            return self.dropout2(self.linear2(self.dropout(torch.relu(self.linear1(h)))))

        for norm, branch in ((self.norm1, attend), (self.norm2, feed_forward)):
            if self.norm_first:
                x = x + branch(norm(x))
            else:
                x = norm(x + branch(x))
        return x
