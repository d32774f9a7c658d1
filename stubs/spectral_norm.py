"""Kata: Spectral normalization by power iteration, as in GAN discriminators.

What it is
----------
Spectral normalization (Miyato et al., 2018) divides a layer's weight by its spectral norm
σ(W), the largest singular value: the factor by which the layer can stretch a vector at most.
Every normalized layer is then 1-Lipschitz, and so is a network of them with 1-Lipschitz
activations. GAN discriminators use it (SNGAN, BigGAN, and many since) so that the critic
cannot sharpen without bound and the generator keeps a useful gradient.

An SVD per training step would cost far too much. σ is estimated by power iteration instead:
two unit vectors u and v, the estimates of the top left and right singular vectors, are kept
from step to step as buffers, and each training forward refines them by one step (the weight
moves little between steps, so one is enough). σ ≈ uᵀ W v.

The maths
---------
W is the weight seen as a matrix: ``dim`` moved to the front, the other dims flattened.

    normalize(x) = x / max(‖x‖, ε)          F.normalize: ε keeps a zero vector at zero
    u ← normalize(W v)                      n_power_iterations times, training mode only,
    v ← normalize(Wᵀ u)                     with no gradient
    σ = uᵀ W v                              u and v held constant for autograd
    W_SN = weight / σ

The gradient reaches the weight through W in σ and in weight / σ only, with u and v constants:
∂σ/∂W = u vᵀ.

Shapes
------
    weight (h, w) of a Linear, nn.Linear(in, out): W = weight, h = out, w = in
    Conv2d weight (out, in, kh, kw), dim=0:        W of shape (out, in·kh·kw)
    ConvTranspose2d weight (in, out, kh, kw), dim=1: dim 1 moved to the front, then flattened:
                                                   W of shape (out, in·kh·kw)
    u : (h,)   v : (w,)   forward(weight) : weight's shape, dtype and device

The contract (interview core)
-----------------------------
* ``SpectralNorm(weight, n_power_iterations=1, dim=0, eps=1e-12)``, an ``nn.Module`` used as
  a parametrization, as torch's ``_SpectralNorm``: ``forward(weight)`` returns weight / σ.
* Buffers ``_u`` of shape (h,) and ``_v`` of shape (w,), named as torch names them, so that a
  checkpoint loads both ways; registered with ``register_buffer``, so that ``state_dict`` and
  ``.to()`` see them; created on the weight's device in its dtype; unit vectors, drawn from a
  standard normal and normalized.
* W: ``dim`` moved to the front (a permute), the rest flattened: (out, −1) for a conv weight.
* Training mode: every forward runs ``n_power_iterations`` steps of the power method first,
  with no gradient, and keeps the new u and v in the buffers. Eval mode: none, the stored
  u and v are used as they are.
* σ = uᵀ W v with u and v constants for autograd (clones of the buffers): gradients reach the
  weight only through W. Two training forwards, then one backward of both (a GAN's D(real)
  and D(fake)), work.
* ``eps`` keeps every normalization finite: a norm below ε does not blow the vector up to unit
  length.
* ``spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None)``
  registers your ``SpectralNorm`` of ``module.<name>`` as its parametrization (with
  ``register_parametrization`` from ``torch.nn.utils.parametrize``) and returns the module:
  ``module.weight`` is then the normalized weight, and the state_dict holds
  ``parametrizations.weight.original``, ``parametrizations.weight.0._u`` and ``._v``, as
  torch's.

Torch parity (stretch)
----------------------
* At construction, u then v drawn with ``weight.new_empty(n).normal_()``, normalized, then 15
  steps of the power method in the order above: after the same ``torch.manual_seed``, your
  u and v are torch's, already close to the singular vectors.
* ε exactly as ``F.normalize``: x / max(‖x‖, ε), not x / (‖x‖ + ε).
* A 1-D weight (a bias, a norm layer's scale) has no matrix to iterate on: torch returns
  weight / max(‖weight‖, ε), zeros for a bias initialised to zeros.
* ``dim`` goes to the front with the other dims in their order, as a permute puts them: for
  dim=2, swapping it with dim 0 gives the same σ in the end but v's entries in another order.
* ``n_power_iterations`` < 1 raises ``ValueError``, as torch's does.
* ``spectral_norm`` of a ``ConvTranspose1d/2d/3d`` defaults to ``dim=1``, its output channels;
  of anything else, to ``dim=0``.

Pitfalls interviewers probe
---------------------------
* σ is the largest singular value, not the Frobenius norm ‖W‖_F = √(Σᵢ σᵢ²): that overshoots,
  so W / ‖W‖_F has a spectral norm below one and shrinks the layer.
* Shapes: W is (h, w), u has h values and v has w, so v ← normalize(Wᵀ u) takes the
  transpose (W u only has the right length for a square W); a 1-D weight has no second dim to
  flatten. A tensor of the wrong shape neither multiplies nor broadcasts.
* Normalize both vectors at every step, or σ = uᵀ W v is off by their lengths.
* Eval mode must not move the estimate: inference is deterministic, and a model evaluated
  twice gives the same outputs.
* u and v are constants for autograd. σ depends on W through them too, but at the singular
  vectors those terms vanish, and backpropagating through the iterations costs memory and
  destabilizes training: iterate under ``torch.no_grad()``.
* Buffers updated in place (so that DataParallel's replicas write back) bump their version:
  use clones in σ, or the backward of an earlier forward fails.
* A conv weight is (out, in, kh, kw): flatten to (out, −1), so that u lives in the output
  channels. For a ConvTranspose, whose weight is (in, out, kh, kw), move dim 1 to the front
  with a permute first: a reshape to (out, −1) alone scrambles the entries.

"From scratch" rules
--------------------
Use tensor operations: mv, matmul, dot, norm, ``F.normalize``, and
``torch.nn.utils.parametrize.register_parametrization`` to attach your module. Do not call
``torch.nn.utils.spectral_norm``, ``torch.nn.utils.parametrizations.spectral_norm``, nor an SVD
or eigensolver (``torch.linalg.svd``, ``svdvals``, ``matrix_norm(W, 2)``, ``torch.linalg.norm(W,
2)``, ``eigh``, ``lobpcg``, ``svd_lowrank``): the grader detects such calls at run time.

Grade yourself with::

    nox -s kata-spectral-norm
"""

from __future__ import annotations

import torch
from torch import nn


class SpectralNorm(nn.Module):
    r"""Divides a weight by its spectral norm, estimated by power iteration.

    .. math::
        \mathbf{W}_{SN} = \frac{\mathbf{W}}{\sigma(\mathbf{W})}, \quad
        \sigma(\mathbf{W}) \approx u^\top W v

    Args:
        weight: the weight to normalize; fixes the sizes of u and v (and their device, dtype).
        n_power_iterations: power-method steps per training forward. Default: 1
        dim: the weight's output dimension, moved to the front. Default: 0
        eps: floor of the norms in the normalizations. Default: 1e-12

    Shape:
        - Input: the weight, any shape with ``dim`` in range
        - Output: the same shape
    """

    def __init__(
        self,
        weight: torch.Tensor,
        n_power_iterations: int = 1,
        dim: int = 0,
        eps: float = 1e-12,
    ) -> None:
        super().__init__()
        raise NotImplementedError("TODO: store the arguments; register the buffers _u and _v")

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: power method in training, then weight / sigma")


def spectral_norm(
    module: nn.Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> nn.Module:
    """Registers ``SpectralNorm`` on ``module.<name>`` as a parametrization; returns the module.

    Args:
        module: the layer whose parameter to normalize (Linear, Conv2d, ...).
        name: the parameter's name. Default: ``"weight"``
        n_power_iterations: power-method steps per training forward. Default: 1
        eps: floor of the norms in the normalizations. Default: 1e-12
        dim: the weight's output dimension. Default: 1 for ConvTranspose1d/2d/3d, else 0
    """
    raise NotImplementedError("TODO: torch.nn.utils.parametrize.register_parametrization")
