"""Mistake: layer_norm defaults eps to 1e-6 (RMSNorm's usual default), not LayerNorm's 1e-5."""

from solutions.layernorm_backward import LayerNormFunction

EXPECT = "test_wrapper_passes_eps"


def layer_norm(x, weight, bias, eps=1e-6):
    return LayerNormFunction.apply(x, weight, bias, eps)
