"""Your tests of LayerNorm in Triton, forward and backward: pass every correct one, fail every
wrong one.

"How would you verify that your kernels are correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many Triton LayerNorms: the reference,
correct ones written in other ways (atomics, a lock, sums down the columns, persistent grids),
and the mistakes candidates make in interviews (with small changes to the reference as the
stretch). Every test must pass on every correct one; each wrong one must fail at least one test.
The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.LayerNormFunction` is the
torch.autograd.Function, with static methods forward(ctx, x, weight, bias, eps) and
backward(ctx, dy) returning (dx, dweight, dbias, None); `kata.layer_norm(x, weight, bias,
eps=1e-5)` the wrapper that calls its apply; and `kata.LayerNorm(N, eps=1e-5)` the module, as
nn.LayerNorm over the last dimension (katas/triton_layernorm.py states the contract). The
grader calls each test once for each layer. Use torch and pytest: torch.testing.assert_close,
and autograd through torch's own F.layer_norm in float64 as a reference.

Test behaviour: y, dx, dweight and dbias, their shapes and dtypes, what backward returns when
you call it yourself (with y.grad_fn as its ctx), the module's attributes. What the grader
watches itself is not your tests' to see: races between programs, torch doing the kernels'
work, what forward saves. It also watches every launch your tests make: a kernel that loads or
stores outside the tensors it was given fails the test that launched it.

Keep the tensors small: the kernels run in Triton's interpreter on the CPU, one program after
another (a few rows; a few hundred only where rows share partial sums, at a narrow width). Use
float32 and float16, never bfloat16: the interpreter computes bfloat16 arithmetic wrongly, and
a test that meets that on a layer is not judged there.

Where to look
-------------
- the formula: over the last dim, the mean and the biased variance, eps inside the root; the
  wrapper's own default eps;
- each gradient on its own: dx through the mean and through the variance (a dy · weight
  constant along a row, or proportional to x̂, must give (almost) nothing back), eps in
  backward too; dweight and dbias summed down every row, the leading dims' too;
- inputs that show a mistake: widths that are not a multiple of a block (20, 33, 100), a row
  wider than a block of 1024, row counts between multiples of a block (1, 33) and past 256
  (267 rows of 32, where rows share partial sums), x a slice of a wider tensor, dy transposed or
  expanded as autograd hands it (y.sum()), float16 far from zero, 3-D inputs, dy left as it
  was handed.

Grade yourself with::

    nox -s kata-triton-layernorm -- --tests
"""

import torch
import torch.nn.functional as F


def test_forward_matches_torch(kata):
    """y matches F.layer_norm computed in float64, at a width that is not a power of two."""
    torch.manual_seed(0)
    x = torch.randn(4, 20) * 3 + 5
    weight, bias = torch.randn(20) * 0.5 + 1, torch.randn(20)
    y = kata.layer_norm(x, weight, bias, 1e-5)
    want = F.layer_norm(x.double(), (20,), weight.double(), bias.double(), 1e-5)
    torch.testing.assert_close(y, want.float(), rtol=1e-4, atol=1e-4)
