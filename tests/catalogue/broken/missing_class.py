# Broken on purpose: the class is misspelt.
# EXPECT = "broken"; SAYS = "defines no `LayerNorm`"
from torch import nn


class LayerNrom(nn.Module):
    pass
