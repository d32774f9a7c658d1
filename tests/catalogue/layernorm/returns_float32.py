"""Mistake: always computes and returns float32, whatever dtype came in."""

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_output_like_input"
ALSO = "test_forward_matches_torch"


class LayerNorm(Reference):
    def forward(self, x):
        return super().forward(x.float()).float()
