"""merge keeps a reference to the other accumulator and folds it in when the statistics are read.

Exact at the time of the merge, but the other accumulator's later batches and merges show up
in this one too.
"""

import torch

EXPECT = "test_merge_takes_a_snapshot"


def chan(a, b):
    n_a, mean_a, m2_a = a
    n_b, mean_b, m2_b = b
    if n_b == 0:
        return a
    n = n_a + n_b
    delta = mean_b - mean_a
    return n, mean_a + delta * (n_b / n), m2_a + m2_b + delta.square() * (n_a * n_b / n)


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self._state = (0, *[torch.zeros(num_features, device=device, dtype=dtype)] * 2)
        self._merged = []  # other accumulators, combined on read

    def _total(self):
        state = self._state
        for other in self._merged:
            state = chan(state, other._total())
        return state

    @property
    def count(self):
        return self._total()[0]

    @property
    def mean(self):
        return self._total()[1]

    def update(self, x):
        n = x.shape[0]
        if n == 0:
            return
        x = x.to(self._state[1].dtype)
        mean = x.sum(0) / n
        self._state = chan(self._state, (n, mean, (x - mean).square().sum(0)))

    def merge(self, other):
        self._merged.append(other)

    def var(self, correction=1):
        n, _, m2 = self._total()
        return m2 / max(0, n - correction)
