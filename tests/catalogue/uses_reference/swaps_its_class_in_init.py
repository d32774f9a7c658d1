# Broken on purpose: nothing of the reference solution at import time, but while the layer is
# built it imports the reference by a computed name and swaps its own class for the reference's
# (`self.__class__ = ...`): every check would then grade the reference's code.
# EXPECT = "broken"; SAYS = "your code reached the reference solution while the checks ran"
import importlib

import torch.nn as nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        reference = importlib.import_module("solution" + "s.layernorm").LayerNorm
        self.__class__ = reference
        reference.__init__(self, normalized_shape, eps, elementwise_affine, bias)
