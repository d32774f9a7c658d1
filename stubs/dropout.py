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

The contract (interview core)
-----------------------------
* ``Dropout(p=0.5, inplace=False)``; attributes ``p`` and ``inplace``. No parameters and no
  buffers: an empty ``state_dict``.
* Training: drop each element independently with probability p and scale the kept ones by
  1/(1 − p), with a fresh mask from torch's random generator on every call. ``p = 0`` returns
  the input's values; ``p = 1`` returns zeros, never NaN, in the output and the gradient.
* Eval (``module.eval()``): the identity.
* The output has x's shape, dtype and device; x itself is left as it was.

Torch parity (stretch)
----------------------
* ``p`` outside [0, 1] raises, in ``__init__``,
  ``ValueError(f"dropout probability has to be between 0 and 1, but got {p}")``.
* ``inplace=True``: write the result into ``x`` and return ``x`` (the same tensor object).
* float16/bfloat16 inputs give the same dtype back.

Pitfalls interviewers probe
---------------------------
* Where does the 1/(1 − p) go, and what would you have to do at inference without it?
* p = 1: 1/(1 − p) is inf, and 0 · inf = NaN. Handle it.
* Keep probability vs drop probability: p is the probability of *dropping*.
* The mask must live on the input's device and have a compatible dtype: ``torch.rand(x.shape)``
  is float32 on the CPU, wrong for a CUDA or float64 input. Use the ``*_like`` factories.
* A mask from Python's ``random`` or numpy ignores ``torch.manual_seed`` and is built on the
  host, then copied to the GPU on every call.
* Do not forget eval mode (``self.training``), and do not modify ``x`` unless ``inplace``.
* Statistically: about a fraction p of the elements are zero, and the mean is preserved.

"From scratch" rules
--------------------
Use tensor operations: rand_like, comparisons, bernoulli, where, multiplication, ... Do not
call the built-in layer or its functional form: ``F.dropout``, ``torch.dropout``,
``torch.nn.functional.dropout1d/2d/3d``, ``F.alpha_dropout``, ``torch.native_dropout``,
``nn.Dropout``. The grader detects such calls at run time. It also runs your module on a
simulated GPU, where in-place random fills such as ``torch.empty_like(x).uniform_()`` cannot
run (that check is then skipped): out-of-place draws such as ``torch.rand_like(x)`` can.

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
