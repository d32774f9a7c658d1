"""Mistake: validates 0 < p < 1, so the valid boundary values p = 0 and p = 1 raise."""

from torch import nn

from solutions.dropout import Dropout as Reference

EXPECT = "test_p_zero_is_identity"
ALSO = "test_p_one_gives_zeros"


class Dropout(Reference):
    def __init__(self, p=0.5, inplace=False):
        nn.Module.__init__(self)
        if not 0 < p < 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace
