"""Kata: Dropout from scratch.

What it is
----------
Dropout (Srivastava, Hinton et al., 2014) is a regularizer: during training every element of
the input is zeroed independently with probability p, so the network cannot rely on any single
unit and learns redundant features (a cheap approximation of averaging many thinned networks).
At inference nothing is dropped. It sits after attention weights and inside the MLP of
Transformers, and before the classifier of many CNNs. This is the "inverted" variant that
torch uses: the survivors are scaled up at training time so inference is a plain identity.

The maths
---------
    training:   mᵢ ~ Bernoulli(1 − p)  (1 = keep), independently for every element
                yᵢ = mᵢ · xᵢ / (1 − p)
                E[yᵢ] = (1 − p) · xᵢ / (1 − p) = xᵢ
    evaluation: y = x

Shapes
------
    input: any shape (*)      output: same shape, dtype and device as the input

The contract (the grader checks it; it mirrors torch.nn.Dropout)
-----------------------------------------------------------------
* ``Dropout(p=0.5, inplace=False)``; attributes ``p`` and ``inplace``. No parameters, no
  buffers (an empty ``state_dict``).
* ``p`` outside [0, 1] raises, in ``__init__``,
  ``ValueError(f"dropout probability has to be between 0 and 1, but got {p}")``.
* Training: drop with probability p, scale the kept elements by 1/(1 − p); a fresh mask on
  every call. ``p = 0`` returns the input values unchanged; ``p = 1`` returns all zeros (for
  finite inputs), never NaN.
* Eval (``module.eval()``): the identity. torch returns the input tensor itself.
* ``inplace=True``: write the result into ``x`` and return ``x`` (the same tensor object).
* Gradient: d y / d x is the same mask times 1/(1 − p).

Pitfalls interviewers probe
---------------------------
* Where does the 1/(1 − p) go, and what would you have to do at inference without it?
* p = 1: 1/(1 − p) is inf, and 0 · inf = NaN. Handle it.
* Keep probability vs drop probability: p is the probability of *dropping*.
* The mask must live on the input's device and have a compatible dtype: ``torch.rand(x.shape)``
  is float32 on the CPU, wrong for a CUDA or float64 input. Use the ``*_like`` factories.
* The grader also runs your module on a simulated CUDA device (FakeTensorMode), where some
  in-place random fills such as ``torch.empty_like(x).uniform_()`` are not supported. Build
  the mask out of place, e.g. from ``torch.rand_like(x)`` or ``torch.bernoulli(...)``.
* Do not forget eval mode (``self.training``), and do not modify ``x`` unless ``inplace``.
* Statistically: about a fraction p of the elements are zero, and the mean is preserved.

"From scratch" rules
--------------------
Use tensor operations: rand_like, comparisons, bernoulli, where, multiplication, ... Do not
call the built-in layer or its functional form: ``F.dropout``, ``torch.dropout``,
``torch.nn.functional.dropout1d/2d/3d``, ``F.alpha_dropout``, ``torch.native_dropout``,
``nn.Dropout``. The grader detects such calls at run time.

Grade yourself with::

    nox -s kata-dropout
"""

from __future__ import annotations

import torch
from torch import nn


class Dropout(nn.Module):
    r"""During training, randomly zeroes elements of the input with probability :attr:`p`.

    The surviving elements are scaled by :math:`\frac{1}{1-p}`, so the module computes the
    identity function during evaluation.

    Args:
        p: probability of an element to be zeroed. Default: 0.5
        inplace: if ``True``, do the operation in place. Default: ``False``

    Shape:
        - Input: :math:`(*)`, any shape
        - Output: :math:`(*)`, same shape as the input
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        raise NotImplementedError("TODO: validate p, store p and inplace")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")
