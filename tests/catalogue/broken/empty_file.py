# Broken on purpose: nothing written at all.
# EXPECT = "broken"; SAYS = "defines no `LayerNorm`"
