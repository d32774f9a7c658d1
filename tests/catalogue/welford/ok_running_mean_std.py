"""RunningMeanStd as RL code writes it: the state keeps the biased variance instead of M2,
each batch's statistics come from torch.var_mean, and the merge is Chan's in variance form.
"""

import torch

EXPECT = "pass"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.biased_var = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        if x.shape[0]:
            var, mean = torch.var_mean(x.to(self.mean.dtype), 0, correction=0)
            self._from_moments(mean, var, x.shape[0])

    def merge(self, other):
        if other.count:
            self._from_moments(other.mean, other.biased_var, other.count)

    def _from_moments(self, mean, var, count):
        total = self.count + count
        delta = mean - self.mean
        m2 = self.biased_var * self.count + var * count + delta**2 * self.count * count / total
        self.mean = self.mean + delta * count / total
        self.biased_var = m2 / total
        self.count = total

    def var(self, correction=1):
        dof = self.count - correction
        return self.biased_var * self.count / (dof if dof > 0 else 0.0)
