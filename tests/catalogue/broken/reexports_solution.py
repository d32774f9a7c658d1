# Broken on purpose: no code of its own, the reference solution re-exported under its name.
# EXPECT = "broken"; SAYS = "Write your own LayerNorm"
from solutions.layernorm import LayerNorm  # noqa: F401
