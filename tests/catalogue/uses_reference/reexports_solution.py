# Broken on purpose: no code of its own, the reference solution re-exported under its name.
# EXPECT = "broken"; SAYS = "line 3 imports the reference solution (from solutions.layernorm"
from solutions.layernorm import LayerNorm  # noqa: F401
