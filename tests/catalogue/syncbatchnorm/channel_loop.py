"""Mistake: the local path loops over the channels in Python."""

import torch

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "test_vectorized"


class SyncBatchNorm(Reference):
    def _local(self, x, momentum):
        outputs = []
        for c in range(x.size(1)):
            xc = x[:, c]
            if self.training or self.running_mean is None:
                mean, var = xc.mean(), xc.var(unbiased=False)
                if self.training and self.track_running_stats:
                    n = xc.numel()
                    with torch.no_grad():
                        self.running_mean[c] = (1 - momentum) * self.running_mean[
                            c
                        ] + momentum * mean
                        self.running_var[c] = (1 - momentum) * self.running_var[
                            c
                        ] + momentum * var * n / (n - 1)
            else:
                mean, var = self.running_mean[c], self.running_var[c]
            yc = (xc - mean) / torch.sqrt(var + self.eps)
            if self.affine:
                yc = yc * self.weight[c] + self.bias[c]
            outputs.append(yc)
        return torch.stack(outputs, dim=1)
