# Broken on purpose: forward's own assert fails on any input that is not 2-D. The learner's
# assert is their code's exception, with its line, not the grader's "an assertion failed".
# EXPECT = "broken"; SAYS = "your code raised AssertionError: only 2-D input, at"
from solutions.layernorm import LayerNorm as Reference


class LayerNorm(Reference):
    def forward(self, x):
        assert x.dim() == 2, "only 2-D input"
        return super().forward(x)
