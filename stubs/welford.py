"""Kata: Welford's streaming mean and variance, and Chan's merge of two partial results.

What it is
----------
Statistics of data that arrives in batches, or lives on several GPUs, without keeping the
data: a running count, mean and M2 (the sum of squared deviations from the mean) per feature.
BatchNorm's CUDA kernels reduce with Welford's update, SyncBatchNorm merges the ranks'
(count, mean, M2) with Chan's formula, and RL code normalizes observations with the same
running statistics (RunningMeanStd). It is asked in ML-coding and quant interviews because the
textbook shortcut, Var = E[x²] − E[x]², fails in float32.

The maths
---------
Rows x of shape (B, F) arrive in batches; everything below is per feature (over dim 0).

    Welford, one row at a time:   n ← n + 1;  δ = x − mean;  mean ← mean + δ / n;
                                  M2 ← M2 + δ · (x − mean)          (the new mean)
    Chan, merging (n_a, mean_a, M2_a) and (n_b, mean_b, M2_b), n = n_a + n_b:
                                  δ = mean_b − mean_a
                                  mean = mean_a + δ · n_b / n
                                  M2   = M2_a + M2_b + δ² · n_a · n_b / n
    A batch is a part like any other: n_b = B, mean_b = Σ x / B, M2_b = Σ (x − mean_b)².
    var(correction) = M2 / max(0, n − correction), as torch.var: correction=1 unbiased (the
    default), correction=0 biased.

Why not E[x²] − E[x]²: around a mean of 1e4 the squares are near 1e8, where float32 steps
by 8; subtracting two such numbers leaves nothing of a variance of 1 (catastrophic
cancellation). Centring on a mean first keeps the small numbers small.

The contract (interview core)
-----------------------------
* ``Welford(num_features, *, device=None, dtype=None)``: count 0, ``mean`` zeros of shape
  ``(num_features,)`` with the factory arguments as torch's modules take them (dtype None:
  torch's default dtype). Not an nn.Module: a plain object.
* ``count``: the number of rows seen, an int (a Python int; an integer tensor also passes,
  never a float). ``mean``: a ``(num_features,)`` tensor in the state's dtype.
* ``update(x)``: adds the rows of ``x`` of shape ``(B, num_features)``, any B >= 0: a batch
  of one row and an empty batch included (the empty one changes nothing). ``x`` itself, the
  caller's, is left as it was.
* ``merge(other)``: adds the rows another Welford has seen, in place on ``self``; ``other``
  is left as it was and shares no tensor with ``self`` that a later update could change:
  later updates and merges of either leave the other as it was.
  update and merge change ``self`` in place; what they return is not used.
* ``var(correction=1)``: the variance of every row seen, as ``torch.var(rows, 0,
  correction=...)``: unbiased by default, ``correction=0`` biased. With one row, ``var()`` is
  NaN (0 / 0) as torch's is; with none, every variance is NaN. A warning, as torch gives, is
  allowed but not required; an exception is wrong.
* Whatever the batch sizes and the merge order, count, mean and var, read at any point,
  agree with ``torch.var_mean`` over the rows seen so far, and stay accurate in float32 when
  the mean is large (1e4 with a spread of 1: the variance within 1%).
* Memory stays O(num_features): the rows are not kept. Vectorized over the features (a loop
  over the rows of a batch is allowed). The device is respected.
* The state's dtype wins over a batch's, as an in-place ``mean.add_(...)`` keeps mean's dtype:
  a float64 state computes in float64, float32 batches too (cast before the batch's mean, not
  after), and float64 batches leave a float32 state float32 (half batches: see below).

Torch parity (stretch)
----------------------
* float16 and bfloat16 batches are accumulated in the state's dtype (float32): cast first,
  as torch's var_mean computes half inputs in float32.
* Any correction, fractional too, as torch.var: the divisor max(0, n − correction), so inf
  (or NaN) past n, never a negative variance.

Pitfalls interviewers probe
---------------------------
* Merging means weighted by batches instead of by counts.
* Dropping the δ² · n_a · n_b / n term: the spread of the parts' means around the whole.
* Updating count or mean before the old value is used in the next line.
* A batch of one: its unbiased variance is NaN, its M2 is 0. An empty batch: 0 / 0.
* n − 1 with n = 1 in Python arithmetic raises ZeroDivisionError; a tensor division gives NaN.
* Taking other's tensors as your own, then updating them in place; or keeping other itself,
  to read later, when its rows may still change.
* Centring the caller's batch in place: a cast to the dtype it already has is no copy.

"From scratch" rules
--------------------
Tensor operations; torch's reductions (sum, mean, even torch.var_mean on one batch) are
allowed. The exercise is the merge: the rows themselves are not kept.

Grade yourself with::

    nox -s kata-welford
"""

from __future__ import annotations

import torch


class Welford:
    """Running per-feature count, mean and variance of rows that arrive in batches.

    Args:
        num_features: F, the size of dim 1 of every batch.
        device: where the state lives. Default: torch's default device
        dtype: the state's floating-point dtype. Default: torch's default dtype

    Attributes:
        count: the number of rows seen (an int).
        mean: (F,) tensor, the mean of every row seen.
    """

    def __init__(
        self,
        num_features: int,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        raise NotImplementedError("TODO: count 0, and a zero mean and M2 of shape (F,)")

    def update(self, x: torch.Tensor) -> None:
        """Add the rows of x, of shape (B, F) with B >= 0."""
        raise NotImplementedError("TODO: the batch's count, mean and M2, merged into the state")

    def merge(self, other: Welford) -> None:
        """Add the rows `other` has seen (Chan's formula); `other` stays as it was."""
        raise NotImplementedError("TODO: Chan's parallel formula")

    def var(self, correction: float = 1) -> torch.Tensor:
        """The variance of every row seen, as torch.var: M2 / max(0, count − correction)."""
        raise NotImplementedError("TODO: M2 / max(0, count - correction)")
