# Broken on purpose: forward calls sys.exit().
# EXPECT = "broken"; SAYS = "your code called sys.exit(0) during this check"
import sys

from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        sys.exit(0)
