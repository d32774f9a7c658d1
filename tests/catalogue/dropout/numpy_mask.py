"""Mistake: draws the mask with numpy: vectorized, but numpy's generator ignores
torch.manual_seed, and the mask is made on the host and copied to the device every call."""

import numpy as np
import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_follows_torch_seed"


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        keep = np.random.rand(*x.shape) >= self.p
        mask = torch.from_numpy(keep).to(device=x.device, dtype=x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask
