"""Mistake: always computes and returns float32, whatever dtype came in."""

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_output_like_input"


class LayerNorm(Reference):
    def forward(self, x):
        return super().forward(x.float()).float()
