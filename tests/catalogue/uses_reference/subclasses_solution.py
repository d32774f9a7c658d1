# Broken on purpose: a subclass of the reference solution, with an import inside a function
# where a quick look at the top of the file would miss it.
# EXPECT = "broken"; SAYS = "line 8 imports the reference solution (import solutions.layernorm"
import torch.nn as nn


def _reference() -> type[nn.Module]:
    import solutions.layernorm

    return solutions.layernorm.LayerNorm


class LayerNorm(_reference()):
    pass
