# Broken on purpose: a missing colon. The grader must name the line, not crash.
# EXPECT = "broken"; SAYS = "line 7: SyntaxError"
import torch
from torch import nn


class LayerNorm(nn.Module)
    def forward(self, x):
        return x
