# Broken on purpose: __init__ takes no arguments.
# EXPECT = "broken"; SAYS = "TypeError"
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x
