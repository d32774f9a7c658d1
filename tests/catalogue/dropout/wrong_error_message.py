"""Mistake: raises ValueError for a bad p, but with its own message instead of torch's."""

from torch import nn

from solutions.dropout import Dropout as Reference

EXPECT = "test_invalid_p_raises"


class Dropout(Reference):
    def __init__(self, p=0.5, inplace=False):
        nn.Module.__init__(self)
        if p < 0 or p > 1:
            raise ValueError("p must be a probability")
        self.p = p
        self.inplace = inplace
