"""Mistake: borrows the parts of an nn.TransformerEncoderLayer kept out of sight and runs it.

The submodules are registered under torch's names (so the state_dict is right), while the
layer itself hides in a plain list, where named_modules() does not look.
"""

from torch import nn

from solutions import prepost_norm as reference

EXPECT = "test_from_scratch"


class TransformerEncoderBlock(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward, dropout, batch_first=True, norm_first=norm_first
        )
        for name in (
            "self_attn",
            "linear1",
            "dropout",
            "linear2",
            "norm1",
            "norm2",
            "dropout1",
            "dropout2",
        ):
            setattr(self, name, getattr(layer, name))
        self.norm_first = norm_first
        self._hidden = [layer]

    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        layer = self._hidden[0]
        layer.train(self.training)
        return layer(
            x, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal
        )


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
