# Broken on purpose: inconsistent indentation.
# EXPECT = "broken"; SAYS = "line 9: IndentationError"
from torch import nn


class LayerNorm(nn.Module):
    def forward(self, x):
        y = x
      return y
