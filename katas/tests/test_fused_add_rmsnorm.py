"""Your tests of the fused residual add + RMSNorm kernel: pass every correct one, fail every
wrong one.

"How would you verify that your kernel is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many fused_add_rms_norm functions:
the reference, correct ones written in other ways (a loop over the row, a persistent grid, a
row split across programs that meet through tl.atomic_add), and the mistakes candidates make
in interviews (with small changes to the reference as the stretch). Every test must pass on
every correct one; each wrong one must fail at least one test. The report names the mistakes
your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.fused_add_rms_norm(x,
residual, weight, eps=1e-6)` is the function, which launches a Triton kernel
(katas/fused_add_rmsnorm.py states the contract). It updates the residual IN PLACE to x +
residual, rounded to x's dtype, and returns the pair (y, residual): y = RMSNorm of that
residual times the weight, a new tensor of x's shape and dtype, and the caller's residual
tensor itself; x is left as it was. Keep a copy of the residual you pass (residual.clone())
to compute what to expect. Use torch and pytest: torch.testing.assert_close, and the formula
written out in float64 as the reference (or F.rms_norm for float32).

Test behaviour: values, shapes, dtypes, which tensors come back and which are changed. How it
is written is the grader's to watch as your tests run: that the kernel does the work (no torch
on x or the residual outside it), that every load and store stays inside its tensors (a kernel
that reads or writes outside them fails the test that ran it, whatever the values), and that
no two programs race on an element.

The kernels run in Triton's interpreter on the CPU, one program at a time: keep the tensors
small (a few rows, widths such as 20, 33 or 100). Test in float32 and float16, not bfloat16:
the interpreter computes bfloat16 arithmetic wrongly, so a test that runs it is not judged.

Where to look
-------------
- the pair: (y, residual) in that order, y new, the residual the caller's tensor updated in
  place in its own dtype, x untouched;
- the formula: y is the norm of the sum (not of x), eps inside the root (what the caller
  passes, 1e-6 by default), then times the weight;
- widths: not a power of two (the block's spare lanes: masked, and not in the mean), and wider
  than a block of 1024;
- rows: leading dims, a number of rows that no grid divides, many rows (past 256), strided
  rows of x (x = buffer[:, :N]) with y and the residual contiguous, a single vector (N,);
- float16: y and the residual in float16, large values (300² overflows float16), and y the norm
  of the sum as stored, rounded to float16 (the next layer adds onto exactly that);
- inputs that show a mistake: a random weight, a mean square near eps, a sum of zeros.

Grade yourself with::

    nox -s kata-fused-add-rmsnorm -- --tests
"""

import torch


def test_residual_updated_in_place_and_returned(kata):
    """The pair is (y, residual): the caller's residual tensor itself, now holding x +
    residual, and y of x's shape and dtype; x is left as it was."""
    torch.manual_seed(0)
    x, residual, weight = torch.randn(4, 64), torch.randn(4, 64), torch.randn(64)
    x_before, residual_before = x.clone(), residual.clone()
    y, res = kata.fused_add_rms_norm(x, residual, weight)
    assert res is residual
    torch.testing.assert_close(residual, x_before + residual_before, rtol=0, atol=0)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert torch.equal(x, x_before)
