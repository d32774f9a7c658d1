# Broken on purpose: a misspelt import.
# EXPECT = "broken"; SAYS = "ModuleNotFoundError: No module named 'torchh'"
import torchh  # noqa: F401
