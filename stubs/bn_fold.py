"""Kata: fold an eval-mode BatchNorm into the Conv2d (or Linear) before it.

What it is
----------
In evaluation mode a BatchNorm no longer looks at the batch: it normalizes with the running
mean and variance it kept during training, so it is a fixed scale and shift per channel. A
convolution followed by a fixed per-channel scale and shift is one convolution: scale each
output channel's filter and adjust its bias, and the BatchNorm disappears. Every deployment
path does this before inference (``torch.fx`` and ``torch.ao.quantization.fuse_modules``,
ONNX Runtime, TensorRT, RepVGG's re-parameterization, YOLO's ``fuse()``): one layer instead of
two, one pass over the activations instead of two, and a conv that quantizes as one. Torch's
own version is ``torch.nn.utils.fusion.fuse_conv_bn_eval``; you write it here.

The maths
---------
The conv computes z = W ⋆ x + b, one output channel c at a time from its filter W[c]. The
BatchNorm in eval mode, with running mean μ, running variance σ², eps ε, weight γ, bias β:

    y[c] = γ[c] · (z[c] − μ[c]) / √(σ²[c] + ε) + β[c]

With s[c] = γ[c] / √(σ²[c] + ε), the scale of channel c:

    y[c] = (s[c] · W[c]) ⋆ x + (b[c] − μ[c]) · s[c] + β[c]

    W'[c] = s[c] · W[c]                    each output channel's whole filter, scaled
    b'[c] = (b[c] − μ[c]) · s[c] + β[c]     the mean goes into the bias

A conv without a bias has b = 0 (the fused conv has a bias all the same). A BatchNorm built
with ``affine=False`` has no weight or bias: γ = 1 and β = 0. A Linear followed by a
BatchNorm1d is the same fold with W of shape (out_features, in_features).

Shapes
------
    conv.weight : (C_out, C_in / groups, kH, kW)     s scales dim 0, C_out
    conv.bias   : (C_out,) or None
    bn (BatchNorm2d(C_out)): running_mean, running_var, weight, bias : (C_out,)
    linear.weight : (out_features, in_features)      s scales dim 0 again, out_features
Grouped and depthwise convs (groups = C_in) keep C_out first: the fold does not change.

The contract (interview core)
-----------------------------
* ``fuse_conv_bn_eval(conv, bn) -> nn.Conv2d`` and ``fuse_linear_bn_eval(linear, bn) ->
  nn.Linear``, named and called as ``torch.nn.utils.fusion``'s, for modules in eval mode.
* Each returns a new module of the original's class, with its sizes, stride, padding,
  dilation and groups (``copy.deepcopy`` keeps them all), whose output is ``bn(conv(x))`` in
  eval mode, through its own weight and bias: a plain convolution, nothing after it.
* The fold uses the running statistics and ``bn.eps``; a conv (or Linear) without a bias
  folds too, and so does a BatchNorm2d with ``affine=False`` (torch's Linear fold raises on a
  BatchNorm1d without affine, so the kata does not ask that of yours).
* The originals stay as they were (weights, buffers, training flags), and the new module
  shares no memory with them: fine-tuning one must not change the other.

Torch parity (stretch)
----------------------
* The fused weight and bias are leaf ``nn.Parameter`` s whose ``requires_grad`` is the
  original's: a frozen conv folds into a frozen conv. (Where the conv had no bias, either is
  fine; torch's is False.)
* A module in training mode raises, as torch's ``AssertionError("Fusion only for eval!")``
  (a ``ValueError`` or ``RuntimeError`` will do).
* The fused module is in eval mode, like the modules it was folded from.
* float64 modules fold into a float64 module, computed in float64.
* On CUDA the fused module lives on CUDA, and nothing is made on the CPU on the way.

Pitfalls interviewers probe
---------------------------
* Eval mode means the running statistics: the batch's mean and variance are training mode's.
* ε goes inside the square root: √(σ² + ε), not √σ² + ε.
* The scale runs along the output channels, dim 0 of the weight: shape it (C_out, 1, 1, 1) for
  a conv and (C_out, 1) for a Linear. A Linear's weight is (out_features, in_features), and a
  vector of C_out values broadcasts along its last dim, the inputs.
* The mean belongs in the bias: b′ = (b − μ) · s + β, not b · s + β.
* A conv built with bias=False has bias None, and a BatchNorm built with affine=False has
  weight and bias None: arithmetic on None fails, so zeros (and ones for γ) stand in.
* Copy before you change: scaling the conv's weight (or its .data) in place edits the caller's
  model, and a shallow copy shares the module's dict of parameters, so assigning a new weight
  to the copy replaces the original's too. A deep copy keeps every setting and shares nothing.
* A new nn.Parameter requires grad whatever the conv's weight did; a module built anew starts
  in training mode, in float32, on the CPU.

"From scratch" rules
--------------------
Use tensor operations, ``copy.deepcopy`` and the ``nn.Conv2d``/``nn.Linear`` constructors. Do
not call torch's fusion (``torch.nn.utils.fusion``: ``fuse_conv_bn_eval``,
``fuse_conv_bn_weights``, the Linear ones), nor what calls it (``torch.ao.quantization``'s
``fuse_modules``, ``torch.fx``'s ``fuse``). The grader detects such calls at run time.

Grade yourself with::

    nox -s kata-bn-fold
"""

from __future__ import annotations

from torch import nn


def fuse_conv_bn_eval(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    r"""Fold an eval-mode BatchNorm2d into the Conv2d before it: a new Conv2d.

    .. math::
        W' = W \cdot s, \quad b' = (b - \mu) \cdot s + \beta,
        \quad s = \frac{\gamma}{\sqrt{\sigma^2 + \epsilon}}

    with s along the output channels (dim 0 of W), the running statistics μ and σ², and
    b = 0 where the conv has no bias, γ = 1 and β = 0 where the BatchNorm has no affine.

    Args:
        conv: an ``nn.Conv2d`` in eval mode, any groups, with or without a bias.
        bn: an ``nn.BatchNorm2d(conv.out_channels)`` in eval mode.

    Returns:
        A new ``nn.Conv2d`` built like ``conv``, with a bias, whose output is
        ``bn(conv(x))``; ``conv`` and ``bn`` are left as they were.
    """
    raise NotImplementedError("TODO: copy the conv, then scale its weight and fold its bias")


def fuse_linear_bn_eval(linear: nn.Linear, bn: nn.BatchNorm1d) -> nn.Linear:
    r"""Fold an eval-mode BatchNorm1d into the Linear before it: a new Linear.

    .. math::
        W' = s \cdot W, \quad b' = (b - \mu) \cdot s + \beta

    with s = γ / √(σ² + ε) along the output features (dim 0 of W).

    Args:
        linear: an ``nn.Linear`` in eval mode, with or without a bias.
        bn: an ``nn.BatchNorm1d(linear.out_features)`` in eval mode.

    Returns:
        A new ``nn.Linear`` built like ``linear``, with a bias, whose output is
        ``bn(linear(x))``; ``linear`` and ``bn`` are left as they were.
    """
    raise NotImplementedError("TODO: the same fold, with W of shape (out, in)")
