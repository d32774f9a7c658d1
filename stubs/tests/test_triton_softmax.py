"""Your tests of the Triton softmax: pass every correct one, fail every wrong one.

"How would you verify that your kernels are correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many Triton softmaxes: the reference,
correct ones written in other ways, and the mistakes candidates make in interviews (with small
changes to the reference as the stretch). Every test must pass on every correct one; each wrong
one must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.SoftmaxFunction` is the
torch.autograd.Function whose forward(ctx, x) and backward(ctx, dy) launch the Triton kernels;
`kata.softmax(x)` applies it, as torch.softmax(x, -1) does (katas/triton_softmax.py states the
contract). The grader calls each test once for each layer. Use torch and pytest:
torch.testing.assert_close, and torch.softmax computed in float64 (and autograd through it, for
dx) as the reference.

Test behaviour: values, gradients, their shapes and dtypes, what the inputs look like after
forward and backward. How the layer is written (torch work outside the kernels, a kernel never
launched) is the grader's to watch, not your tests'. It also watches every launch your tests
make: a load or store outside the tensors the launch was given fails the test that ran it, and
a masked load without other= reads NaN in its masked lanes.

Triton on the CPU: the kernels run in Triton's interpreter, one program after another, so keep
the tensors small (a few rows, widths such as 20, 33, 100), but for a case that needs more.
Test in float32 and float16, never bfloat16: the interpreter computes bfloat16 arithmetic
wrongly, and the grader does not judge a test that runs it.

Where to look
-------------
- the formula: per row of the last dim, exp(x − max) / Σ exp(x − max), positive and summing
  to 1; backward dx = y · (dy − Σ dy · y);
- the blocks: a row whose width is no multiple of the block (its spare lanes are no part of
  it), a row wider than any block (the contract allows 65536 lanes at most) whose max comes late,
  so that the running sum must be rescaled as the max grows;
- inputs that show a mistake: logits far above 0 or far below it (all negative), a dy that is
  the same along a row, x's rows further apart than N (a slice of a wider tensor), a transposed
  or expanded dy as autograd hands them, leading dims and more than 128 rows, float16, x
  changed after forward (backward needs only y).

Grade yourself with::

    nox -s kata-triton-softmax -- --tests
"""

import torch


def test_rows_sum_to_one(kata):
    """Each row of the output is a probability distribution that matches torch.softmax: positive,
    summing to 1 (a row of 64: one block)."""
    torch.manual_seed(0)
    x = torch.randn(4, 64)
    y = kata.softmax(x)
    want = torch.softmax(x.double(), -1)
    torch.testing.assert_close(y.double(), want, rtol=1e-4, atol=1e-7)
    ones = torch.ones(4, dtype=torch.float64)
    torch.testing.assert_close(y.double().sum(-1), ones, rtol=0, atol=1e-5)
