"""Your tests of the fused Triton RMSNorm: pass every correct kernel, fail every wrong one.

"How would you verify that your kernel is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many rms_norm functions: the
reference, correct ones written in other ways (a loop over the row, several rows per program,
a persistent grid, autotuned), and the mistakes candidates make in interviews (with small
changes to the reference as the stretch). Every test must pass on every correct one; each wrong
one must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.rms_norm(x, weight,
eps=1e-6)` is the function, which launches a Triton kernel (katas/triton_rmsnorm.py states
the contract: x of shape (*, N), rows may be strided, weight of shape (N,), the output in x's
shape and dtype). The grader calls each test once for each function. Use torch and pytest:
torch.testing.assert_close, and the formula x · rsqrt(mean(x²) + eps) · weight written out in
float64 as the reference (or F.rms_norm for float32).

Test behaviour: values, shapes, dtypes, the input left as it was. How it is written is the
grader's to watch as your tests run: that the kernel does the work (no torch on the
activations outside it), and that every load and store stays inside its tensors (a kernel
that reads or writes outside them fails the test that ran it, whatever the values).

The kernels run in Triton's interpreter on the CPU, one program at a time: keep the tensors
small (a few rows, widths such as 20, 33 or 100). Test in float32 and float16, not bfloat16:
the interpreter computes bfloat16 arithmetic wrongly, so a test that runs it is not judged.

Where to look
-------------
- the formula: the mean of the squares over the last dim, eps inside the root (what the caller
  passes, 1e-6 by default), then times the weight, element by element;
- widths: not a power of two (the block's spare lanes: masked, and not in the mean), and wider
  than a block of 1024 or 4096;
- rows: leading dims (their product is the number of rows), many rows (past 256), strided rows
  (x = buffer[:, :N]), a single vector (N,);
- dtypes: the output in x's dtype, float16 (large values too: 300² overflows float16);
- inputs that show a mistake: a random weight, a mean square near eps, a row of zeros.

Grade yourself with::

    nox -s kata-triton-rmsnorm -- --tests
"""

import torch


def test_each_row_has_root_mean_square_one(kata):
    """With a weight of ones and a tiny eps, each row of the output has a mean square of 1,
    and keeps the signs of its input (no mean is subtracted)."""
    torch.manual_seed(0)
    x = torch.randn(4, 64) * 3 + 2
    y = kata.rms_norm(x, torch.ones(64), eps=1e-12)
    assert y.shape == x.shape and y.dtype == x.dtype
    torch.testing.assert_close(y.square().mean(-1), torch.ones(4), atol=1e-5, rtol=0)
    assert torch.equal(y.sign(), x.sign())
