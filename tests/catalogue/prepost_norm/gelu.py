"""Mistake: GELU in the feed-forward network; nn.TransformerEncoderLayer's default is ReLU."""

import torch.nn.functional as F

from solutions.prepost_norm import PostNormResidual, PreNormResidual  # noqa: F401
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_pre_norm_block_matches_torch"


class TransformerEncoderBlock(Reference):
    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(F.gelu(self.linear1(x)))))
