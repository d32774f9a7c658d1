# Broken on purpose: forward forgets to return.
# EXPECT = "broken"; SAYS = "returned None instead of a tensor"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        super().forward(x)
