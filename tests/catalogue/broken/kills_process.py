# Broken on purpose: forward ends the interpreter without cleanup.
# EXPECT = "broken"; SAYS = "ended abruptly"
import os

from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        os._exit(3)
