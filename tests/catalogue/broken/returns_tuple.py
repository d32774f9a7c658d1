# Broken on purpose: forward returns a tuple.
# EXPECT = "broken"; SAYS = "returned a tuple"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        return super().forward(x), None
