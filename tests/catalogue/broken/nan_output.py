# Broken on purpose: the output is all NaN.
# EXPECT = "broken"; SAYS = "It contains NaN"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        return super().forward(x) * float("nan")
