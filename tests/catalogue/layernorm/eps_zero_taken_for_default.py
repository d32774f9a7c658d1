"""Mistake: `self.eps = eps or 1e-5`, so LayerNorm(D, eps=0.0) normalizes with eps 1e-5, the
default: a value given is taken for a missing one."""

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_eps_inside_sqrt"


class LayerNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-5, *args, **kwargs):
        super().__init__(normalized_shape, eps or 1e-5, *args, **kwargs)
