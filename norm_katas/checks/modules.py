"""The learner's module beside torch's: built alike, holding the same state, and compared
parameter for parameter, output for output and gradient for gradient; and what it does to the
input it is given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from norm_katas.checks.comparisons import (
    _fmt,
    describe_call,
    expect_close,
    expect_grads_close,
    expect_like,
    shape_of,
)
from norm_katas.runtime.outcomes import fail

# What getattr returns for an attribute the module lacks: said "missing" in messages.
MISSING = object()


def load_torch_state(mine: nn.Module, ref: nn.Module, *, given: str, advice: str = "") -> None:
    """Load torch.nn's state_dict into the learner's module (strict), failing clearly."""
    try:
        mine.load_state_dict(ref.state_dict())
    except Exception as e:
        theirs = type(ref).__name__
        fail(f"{given}: could not load nn.{theirs}'s state_dict into yours: {e}. {advice}".rstrip())


def paired(
    kata: Any, name: str, *args: Any, stats: bool = False, **kwargs: Any
) -> tuple[nn.Module, nn.Module]:
    """The learner's `name` (kata.<name>) and torch's nn.<name>, built with the same arguments
    and holding the same state: (mine, torch's).

    torch's parameters are drawn at random (so that a swapped or ignored one shows) and loaded
    into the learner's, strictly. With stats=True its running statistics are random too, as
    after some training, so that eval mode has something other than mean 0 and variance 1.
    """
    ref = getattr(nn, name)(*args, **kwargs)
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_()
        if stats and getattr(ref, "running_mean", None) is not None:
            ref.running_mean.normal_().mul_(2)
            ref.running_var.uniform_(0.5, 3.0)
            ref.num_batches_tracked.fill_(5)
    mine = getattr(kata, name)(*args, **kwargs)
    load_torch_state(mine, ref, given=describe_call(name, *args, **kwargs))
    return mine, ref


def torch_initialised(kata: Any, name: str, *args: Any, **kwargs: Any) -> nn.Module:
    """The learner's kata.<name>(*args, **kwargs) holding torch's initial state (weight one,
    bias zero: exact in any dtype, so that only the statistics show in a comparison)."""
    mine, ref = getattr(kata, name)(*args, **kwargs), getattr(nn, name)(*args, **kwargs)
    load_torch_state(mine, ref, given=describe_call(name, *args, **kwargs))
    return mine


def expect_same_parameters(mine: nn.Module, ref: nn.Module, *, given: str) -> None:
    """mine has ref's parameters, by name, each with ref's initial value (a fresh layer's)."""
    have, want = dict(mine.named_parameters()), dict(ref.named_parameters())
    if set(have) != set(want):
        fail(f"{given} has parameters {sorted(have)}, expected {sorted(want)}.")
    for name, p in want.items():
        expect_close(have[name], p.detach(), given=given, what=f"initial {name}")


def expect_arguments_kept(module: nn.Module, call: str, want: dict[str, Any]) -> None:
    """module.<name> == value for each constructor argument name=value; `call` is the
    constructor call as messages show it ("BatchNorm1d(7, eps=0.001)")."""
    for name, value in want.items():
        have = getattr(module, name, MISSING)
        if have is MISSING or have != value:
            shown = "missing" if have is MISSING else repr(have)
            fail(f"{call}.{name} should be {value!r}, got {shown}.")


def expect_no_weight_and_bias(module: nn.Module, *, given: str) -> None:
    """weight and bias exist and are None, as torch registers them without affine."""
    if any(getattr(module, name, MISSING) is not None for name in ("weight", "bias")):
        fail(f"{given} should have weight = None and bias = None.")


def forward_with_grad(
    run: Callable[[torch.Tensor], Any], x: torch.Tensor
) -> tuple[torch.Tensor, Any]:
    """(a leaf copy of x that requires grad, run(copy)): ready for backward_grads."""
    xi = x.clone().requires_grad_()
    return xi, run(xi)


def backward_grads(
    out: Any, grad_out: torch.Tensor, x: torch.Tensor, params: nn.Module
) -> dict[str, torch.Tensor | None]:
    """out.backward(grad_out), and the gradients it gave: {"input": x.grad, and each of params'
    parameters by name}. params' gradients are cleared first, so that they are this backward's."""
    for p in params.parameters():
        p.grad = None
    out.backward(grad_out)
    return {"input": x.grad, **{n: p.grad for n, p in params.named_parameters()}}


def grads_of(
    module: nn.Module, x: torch.Tensor, grad_out: torch.Tensor
) -> dict[str, torch.Tensor | None]:
    """The gradients of one backward of module(x) with grad_out, by name: "input" and each of
    module's parameters (the dict expect_grads_close compares)."""
    xi, out = forward_with_grad(module, x)
    return backward_grads(out, grad_out, xi, module)


def expect_same_grads(
    mine: nn.Module, ref: nn.Module, x: torch.Tensor, grad_out: torch.Tensor, *, given: str
) -> None:
    """mine and ref (torch's, holding the same state) give the same gradients of the input and
    of every parameter, backward from grad_out at x."""
    # Each backward its own grad_out: one that writes into it (a custom Function's) must not
    # change what torch's is given.
    mine_grads = grads_of(mine, x, grad_out.clone())
    expect_grads_close(mine_grads, grads_of(ref, x, grad_out.clone()), given=given)


def expect_same_grads_in_float64(
    mine: nn.Module,
    ref: nn.Module,
    x_shape: tuple[int, ...],
    *,
    device: torch.device | str,
    given: str,
) -> None:
    """mine and ref (torch's, holding the same state), moved to float64, give the same
    gradients at x = 2 · randn + 1, backward from a random grad_out. `given` names the layers;
    the input is said after it."""
    mine, ref = mine.to(device, torch.float64), ref.to(device, torch.float64)
    x = torch.randn(x_shape, dtype=torch.float64, device=device) * 2 + 1
    grad_out = torch.randn_like(x)
    expect_same_grads(mine, ref, x, grad_out, given=f"{given} on x {shape_of(x)}")


def expect_output_like_input(
    make: Callable[[], tuple[nn.Module, nn.Module]],
    x_shape: tuple[int, ...],
    *,
    device: torch.device,
    name: str,
) -> None:
    """In float32 and in float64, the learner's layer of a fresh make() (a pair as `paired`
    gives it) maps a random x of x_shape to an output of x's shape, dtype and device; `name`
    is the layer as messages show it."""
    for dtype in (torch.float32, torch.float64):
        mine = make()[0].to(device, dtype)
        x = torch.randn(x_shape, device=device, dtype=dtype)
        expect_like(mine(x), x, given=f"{name} on x {shape_of(x)}")


def expect_input_unmodified(
    run: Callable[[torch.Tensor], Any], x: torch.Tensor, *, given: str
) -> None:
    """run(x) leaves x's values as they were: the caller still owns it."""
    before = x.clone()
    run(x)
    if not torch.equal(x, before):
        fail(f"{given} changed its input x in place; the caller's tensor must stay as it was.")


def expect_state_dict_round_trip(mine: nn.Module, ref: nn.Module, *, given: str) -> None:
    """mine loads ref's state_dict (strict) and ref loads mine's: same names, shapes, dtypes.

    ref's entries are randomised first, so a load that silently skips an entry shows up.
    """
    with torch.no_grad():
        for t in ref.state_dict().values():
            t.normal_() if t.is_floating_point() else t.fill_(7)
    want, have = ref.state_dict(), mine.state_dict()
    if set(want) != set(have):
        fail(f"{given}: your state_dict has keys {sorted(have)}, torch.nn's has {sorted(want)}.")
    for name, t in want.items():
        if have[name].shape != t.shape or have[name].dtype != t.dtype:
            fail(
                f"{given}: state_dict entry {name} is {_fmt(have[name].dtype)} "
                f"{_fmt(have[name].shape)}, torch.nn's is {_fmt(t.dtype)} {_fmt(t.shape)}."
            )
    try:
        mine.load_state_dict(want)
    except Exception as e:
        fail(f"{given}: loading torch.nn's state_dict into yours failed: {e}")
    for name, t in mine.state_dict().items():
        expect_close(
            t, want[name], given=given, what=f"{name} after load_state_dict", rtol=0, atol=0
        )
    try:
        ref.load_state_dict(mine.state_dict())
    except Exception as e:
        fail(f"{given}: loading your state_dict into torch.nn's failed: {e}")


def expect_registered_state(module: nn.Module, *, dtype: torch.dtype, given: str) -> None:
    """After module.to(dtype), every floating tensor it holds must have that dtype.

    A tensor kept as a plain attribute (self.w = torch.ones(...)) is not moved by .to();
    only parameters and buffers are.
    """
    for prefix, sub in module.named_modules():
        for name, value in vars(sub).items():
            if (
                isinstance(value, torch.Tensor)
                and value.is_floating_point()
                and value.dtype != dtype
            ):
                attr = f"self.{prefix + '.' if prefix else ''}{name}"
                fail(
                    f"{given}: {attr} is a plain tensor attribute, so .to({_fmt(dtype)}) left it "
                    f"{_fmt(value.dtype)}. Make it an nn.Parameter or register_buffer() it."
                )
    for name, t in module.state_dict().items():
        if t.is_floating_point() and t.dtype != dtype:
            fail(f"{given}: after .to({_fmt(dtype)}), {name} is still {_fmt(t.dtype)}.")
