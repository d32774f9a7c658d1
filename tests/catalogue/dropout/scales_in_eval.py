"""Mistake: divides by (1-p) in eval mode too, as if eval needed the training-time scale."""

from solutions.dropout import Dropout as Reference

EXPECT = "test_eval_is_identity"
ALSO = "test_forward_matches_torch"


class Dropout(Reference):
    def forward(self, x):
        if not self.training:
            return x / (1 - self.p)
        return super().forward(x)
