"""Two independent mistakes: no special case for p = 1 (0 / 0 = NaN there), and a mask drawn
with torch.rand(x.shape), which is always on the CPU. The verdict names the second one too."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_p_one_gives_zeros"
ALSO = "test_follows_device"


class Dropout(Reference):
    def forward(self, x):
        if not self.training:
            return x
        mask = (torch.rand(x.shape) >= self.p).to(x.dtype)
        out = x * mask / (1 - self.p)
        return x.copy_(out) if self.inplace else out
