"""Your tests of spectral normalization: pass every correct layer, fail every wrong one.

"How would you verify that your SpectralNorm is correct?" is the interviewer's next question.
Here you answer it in code. The grader runs this file against many SpectralNorms: the
reference, correct ones written in other ways, and the mistakes candidates make in interviews
(with small changes to the reference as the stretch). Every test must pass on every correct
layer; each wrong layer must fail at least one test. The report names the mistakes your tests
miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.SpectralNorm` is the class,
SpectralNorm(weight, n_power_iterations=1, dim=0, eps=1e-12), a parametrization whose
forward(weight) returns weight / σ and whose buffers _u and _v hold the power method's vectors;
`kata.spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None)` registers
it on a module and returns the module (katas/spectral_norm.py states the contract). The grader
calls each test once for each layer. Use torch and pytest: torch.testing.assert_close,
pytest.raises, and torch.nn.utils.parametrizations.spectral_norm as a reference where it helps.

Test behaviour: values, gradients, the buffers and the state_dict, dtypes, train and eval,
errors. How the layer is written (no SVD, no built-in spectral norm) is the grader's to watch,
not your tests'.

Where to look
-------------
- one power step from u and v that you set yourself: u from W v, v from Wᵀ u, both normalized
  (a correct layer may update v first, as torch's older hook does: accept either order);
- σ = uᵀ W v of the new vectors, and the gradient that holds u and v constant;
- training against eval, one forward against several, n_power_iterations, eps;
- the buffers: names, shapes, unit length, dtype, a checkpoint of torch's spectral_norm;
- the matrix a weight is seen as: a Linear's, a Conv2d's (out, in, kh, kw), another dim;
- spectral_norm itself: the parameter it is given, its arguments and defaults, ConvTranspose;
- inputs that show a mistake: a weight that is not square, a weight shorter than eps, two
  forwards before one backward, a 1-D weight, n_power_iterations below 1, torch's start after
  the same seed.

Grade yourself with::

    nox -s kata-spectral-norm -- --tests
"""

import torch
import torch.nn.functional as F


def test_eval_divides_by_sigma_of_the_stored_vectors(kata):
    """In eval mode no power step runs: the output is W / (uᵀ W v) with the u and v stored in
    the buffers _u and _v."""
    torch.manual_seed(0)
    w = torch.randn(3, 5, dtype=torch.float64)
    sn = kata.SpectralNorm(w)
    u = F.normalize(torch.randn(3, dtype=torch.float64), dim=0)
    v = F.normalize(w.T @ u, dim=0)
    with torch.no_grad():
        sn._u.copy_(u)
        sn._v.copy_(v)
    out = sn.eval()(w)
    torch.testing.assert_close(out, w / (u @ w @ v), rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(sn._u, u, rtol=0, atol=0)
