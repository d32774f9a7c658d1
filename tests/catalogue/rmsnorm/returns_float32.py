"""Mistake: always computes and returns float32, whatever dtype came in."""

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_output_like_input"
ALSO = "test_forward_matches_torch"


class RMSNorm(Reference):
    def forward(self, x):
        return super().forward(x.float()).float()
