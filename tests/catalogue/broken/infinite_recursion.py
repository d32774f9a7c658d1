# Broken on purpose: forward calls itself.
# EXPECT = "broken"; SAYS = "your code raised RecursionError"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        return self(x)
