# Broken on purpose: the class is misspelt.
# EXPECT = "broken"; SAYS = "defines no `LayerNorm`, but it defines `LayerNrom`: rename it LayerNorm"
from torch import nn


class LayerNrom(nn.Module):
    pass
