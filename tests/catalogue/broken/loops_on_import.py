# Broken on purpose: top-level code never finishes.
# EXPECT = "broken"; SAYS = "did not finish in time"
while True:
    pass
