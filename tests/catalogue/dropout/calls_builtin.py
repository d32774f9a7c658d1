"""Mistake: calls the built-in F.dropout instead of building the mask."""

import torch.nn.functional as F

from solutions.dropout import Dropout as Reference

EXPECT = "test_from_scratch"


class Dropout(Reference):
    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.inplace)
