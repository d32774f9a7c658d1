"""Mistake: at p = 1 it returns x.zero_(): all zeros, as it should be, but the caller's x is
zeroed too, although inplace is False."""

from solutions.dropout import Dropout as Reference

EXPECT = "test_input_unmodified"


class Dropout(Reference):
    def forward(self, x):
        if self.training and self.p == 1:
            return x.zero_()
        return super().forward(x)
