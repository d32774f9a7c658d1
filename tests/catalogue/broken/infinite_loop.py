# Broken on purpose: forward never returns.
# EXPECT = "broken"; SAYS = "did not finish in time"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        while True:
            pass
