# Broken on purpose: forward raises.
# EXPECT = "broken"; SAYS = "your code raised ValueError: shapes do not line up, at"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        raise ValueError("shapes do not line up")
