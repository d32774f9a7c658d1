"""Mistake: the layer turns itself into torch's own while it is built (`self.__class__ =
nn.LayerNorm`), so every value is torch's and no line of the file computes one. The grader
judges what runs, not what the file imports."""

import torch.nn as nn

EXPECT = "test_from_scratch"


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        self.__class__ = nn.LayerNorm
        nn.LayerNorm.__init__(self, normalized_shape, eps, elementwise_affine, bias)
