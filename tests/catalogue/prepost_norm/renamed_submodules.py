"""Mistake: own submodule names (attn, ff, ln1, ln2): torch's checkpoints do not load."""

from torch import nn

from solutions import prepost_norm as reference

EXPECT = "test_block_submodules"
ALSO = (
    "test_two_distinct_norms, "
    "test_state_dict_round_trip, "
    "test_post_norm_block_matches_torch, "
    "test_pre_norm_block_matches_torch, "
    "test_gradients_match"
)


class TransformerEncoderBlock(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.ff = nn.Sequential(
            nn.Linear(d_model, dim_feedforward),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(dim_feedforward, d_model),
            nn.Dropout(dropout),
        )
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def sa(self, x):
        return self.drop(self.attn(x, x, x, need_weights=False)[0])

    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if self.norm_first:
            x = x + self.sa(self.ln1(x))
            return x + self.ff(self.ln2(x))
        x = self.ln1(x + self.sa(x))
        return self.ln2(x + self.ff(x))


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
