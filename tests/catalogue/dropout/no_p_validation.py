"""Mistake: accepts any p; Dropout(1.5) builds a module that silently does nonsense."""

from torch import nn

from solutions.dropout import Dropout as Reference

EXPECT = "test_invalid_p_raises"


class Dropout(Reference):
    def __init__(self, p=0.5, inplace=False):
        nn.Module.__init__(self)
        self.p = p
        self.inplace = inplace
