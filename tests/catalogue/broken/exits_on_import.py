# Broken on purpose: exits while being imported.
# EXPECT = "broken"; SAYS = "called sys.exit(1) while being imported"
import sys

sys.exit(1)
