"""count kept as a 0-dim int64 tensor on the state's device, read back as Python ints with
.tolist() for the count ratios: exact, at the cost of a host sync. The simulated GPU (the meta
device) has no values to read back, so the device check is skipped for it, never failed.
"""

import torch

EXPECT = "pass"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = torch.zeros((), dtype=torch.int64, device=device)
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        x = x.to(self.mean.dtype)
        b = x.shape[0]
        if b == 0:
            return
        mb = x.mean(0)
        self._combine(b, mb, (x - mb).square().sum(0))

    def merge(self, other):
        self._combine(other.count.tolist(), other.mean, other.m2)

    def _combine(self, nb, mb, m2b):
        na = self.count.tolist()
        n = na + nb
        if nb == 0:
            return
        d = mb - self.mean
        self.mean = self.mean + d * (nb / n)
        self.m2 = self.m2 + m2b + d * d * (na * nb / n)
        self.count = self.count + nb

    def var(self, correction=1):
        return self.m2 / max(0, self.count.tolist() - correction)
