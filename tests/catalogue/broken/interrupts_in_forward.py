# Broken on purpose: forward raises KeyboardInterrupt, a debugging stop left in. pytest would
# end the run on it; each check fails instead, and every check runs.
# EXPECT = "broken"; SAYS = "your code raised KeyboardInterrupt, at"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        raise KeyboardInterrupt
