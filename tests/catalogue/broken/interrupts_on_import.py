# Broken on purpose: importing the file raises KeyboardInterrupt, a debugging stop left in.
# EXPECT = "broken"; SAYS = "raised KeyboardInterrupt (line 5: raise KeyboardInterrupt)"
from solutions.layernorm import LayerNorm  # noqa: F401

raise KeyboardInterrupt
