# Broken on purpose: the reference solution, imported by a computed name and subclassed.
# EXPECT = "broken"; SAYS = "comes from solutions/layernorm.py. Write your own"
import importlib

_reference = importlib.import_module("solution" + "s.layernorm")


class LayerNorm(_reference.LayerNorm):
    pass
