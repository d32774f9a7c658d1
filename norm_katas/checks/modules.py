"""The learner's module beside torch's: built alike, holding the same state, and compared
parameter for parameter, output for output and gradient for gradient; and what it does to the
input it is given."""

from __future__ import annotations

import weakref
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
from norm_katas.runtime.outcomes import fail, fail_for

# What getattr returns for an attribute the module lacks: said "missing" in messages.
MISSING = object()


def load_torch_state(mine: nn.Module, ref: nn.Module, *, given: str, advice: str = "") -> None:
    """Load torch.nn's state_dict into the learner's module (strict), failing clearly."""
    try:
        mine.load_state_dict(ref.state_dict())
    except Exception as e:
        theirs = type(ref).__name__
        fail(f"{given}: could not load nn.{theirs}'s state_dict into yours: {e}. {advice}".rstrip())


# The learner's tensors that hold torch's entries under other names (gamma for weight), by
# module: {torch's name: the learner's}, so that gradients are compared name for name.
_RENAMED: weakref.WeakKeyDictionary[nn.Module, dict[str, str]] = weakref.WeakKeyDictionary()


def place_state(
    mine: nn.Module, state: dict[str, torch.Tensor], *, initial: dict[str, torch.Tensor]
) -> tuple[str, str] | None:
    """Copy each entry of `state` (a torch layer's state_dict) into the learner's tensor that
    holds it, value for value, in that tensor's own dtype: None when every entry found its
    tensor, else (the entry's name, why not) for the first that did not.

    The tensor is the learner's attribute of the entry's name, registered or not: a parameter,
    a buffer (persistent or not) or a plain tensor attribute. Where there is no such attribute
    (gamma for weight), it is found by elimination: the one tensor of the learner's not holding
    another entry whose shape and value are the entry's in `initial` (a fresh torch layer's
    state), one such tensor for each entry. How the state is registered and named is what the
    registration checks judge (parameters, buffers, state_dict, .to()); the checks that build
    on this one judge what the layer computes with it."""
    targets: dict[str, torch.Tensor] = {}
    for name in state:
        value = _attribute(mine, name)
        if isinstance(value, torch.Tensor):
            targets[name] = value
    renamed = _by_elimination(mine, [n for n in state if n not in targets], targets, initial)
    for name, attr in renamed.items():
        targets[name] = getattr(mine, attr)
    for name, value in state.items():
        have = targets.get(name)
        if have is None:
            found = _attribute(mine, name)
            shown = "None" if found is None else type(found).__name__
            why = (
                f"its {name} is {shown}, where torch's is a tensor"
                if found is not MISSING
                else f"it has no tensor attribute {name}, and no single tensor under another "
                f"name starts as torch's {name} does"
            )
            return name, why
        if have.shape != value.shape:
            return name, f"its {name} has shape {_fmt(have.shape)}, torch's {_fmt(value.shape)}"
    with torch.no_grad():
        for name, value in state.items():
            targets[name].copy_(value)
    if renamed:
        _RENAMED[mine] = {name: attr for name, attr in renamed.items()}
    return None


def _attribute(module: nn.Module, dotted: str) -> Any:
    """module.a.b for "a.b", or MISSING."""
    value: Any = module
    for part in dotted.split("."):
        value = getattr(value, part, MISSING)
        if value is MISSING:
            return MISSING
    return value


def _by_elimination(
    mine: nn.Module,
    names: list[str],
    taken: dict[str, torch.Tensor],
    initial: dict[str, torch.Tensor],
) -> dict[str, str]:
    """{entry: the learner's attribute holding it} for the top-level entries `names` that have
    no attribute of their name, where each has exactly one candidate, a tensor of the learner's
    own that holds no other entry, with the entry's initial shape and value, and no two share
    one; {} otherwise."""
    if not names or any("." in n or n not in initial for n in names):
        return {}
    held = {id(t) for t in taken.values()}
    own = {**dict(mine.named_parameters(recurse=False)), **dict(mine.named_buffers(recurse=False))}
    own.update({k: v for k, v in vars(mine).items() if isinstance(v, torch.Tensor)})
    free = {k: v for k, v in own.items() if id(v) not in held and not k.startswith("_")}
    found: dict[str, str] = {}
    for name in names:
        want = initial[name]
        fits = [
            k
            for k, v in free.items()
            if v.shape == want.shape and torch.equal(v.detach().cpu().to(want.dtype), want)
        ]
        if len(fits) != 1 or fits[0] in found.values():
            return {}
        found[name] = fits[0]
    return found


def place_torch_state(
    mine: nn.Module,
    ref: nn.Module,
    *,
    given: str,
    initial: dict[str, torch.Tensor] | None = None,
) -> None:
    """Give the learner's module torch's state, value for value (see place_state), or fail for
    the check named for the entry that has no tensor to go to: test_buffers for a buffer,
    test_parameters for a parameter. `initial`: ref's state when fresh (default: as it is)."""
    state = ref.state_dict()
    problem = place_state(mine, state, initial=state if initial is None else initial)
    if problem is not None:
        name, why = problem
        owner = "test_buffers" if name in dict(ref.named_buffers()) else "test_parameters"
        fail_for(owner, f"{given}: nn.{type(ref).__name__}'s {name} has nowhere to go: {why}.")


def paired(
    kata: Any, name: str, *args: Any, stats: bool = False, **kwargs: Any
) -> tuple[nn.Module, nn.Module]:
    """The learner's `name` (kata.<name>) and torch's nn.<name>, built with the same arguments
    and holding the same state: (mine, torch's).

    torch's parameters are drawn at random (so that a swapped or ignored one shows) and placed
    in the learner's tensors of the same names, however they are registered (place_state).
    With stats=True its running statistics are random too, as after some training, so that
    eval mode has something other than mean 0 and variance 1.
    """
    ref = getattr(nn, name)(*args, **kwargs)
    fresh = {k: v.clone() for k, v in ref.state_dict().items()}
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_()
        if stats and getattr(ref, "running_mean", None) is not None:
            ref.running_mean.normal_().mul_(2)
            ref.running_var.uniform_(0.5, 3.0)
            ref.num_batches_tracked.fill_(5)
    mine = getattr(kata, name)(*args, **kwargs)
    place_torch_state(mine, ref, given=describe_call(name, *args, **kwargs), initial=fresh)
    return mine, ref


def torch_initialised(kata: Any, name: str, *args: Any, **kwargs: Any) -> nn.Module:
    """The learner's kata.<name>(*args, **kwargs) holding torch's initial state (weight one,
    bias zero: exact in any dtype, so that only the statistics show in a comparison)."""
    mine, ref = getattr(kata, name)(*args, **kwargs), getattr(nn, name)(*args, **kwargs)
    place_torch_state(mine, ref, given=describe_call(name, *args, **kwargs))
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


def expect_no_weight_and_bias(
    module: nn.Module, *, given: str, with_affine: nn.Module | None = None
) -> None:
    """weight and bias exist and are None, as torch registers them without affine.

    with_affine: the learner's layer built with affine on. Where it has no weight (or bias)
    attribute either, the layer names them otherwise (gamma and beta, say): that is the
    parameters check's mistake (test_parameters), and this one fails for it."""
    for name in ("weight", "bias"):
        if with_affine is not None and all(
            getattr(layer, name, MISSING) is MISSING for layer in (module, with_affine)
        ):
            fail_for(
                "test_parameters",
                f"{given} has no attribute {name}, and neither has the layer with affine: "
                f"torch's layer calls it {name}.",
            )
    if any(getattr(module, name, MISSING) is not None for name in ("weight", "bias")):
        fail(f"{given} should have weight = None and bias = None.")


def expect_affine_state_dropped(
    mine_on: nn.Module, mine_off: nn.Module, ref_on: nn.Module, ref_off: nn.Module, *, given: str
) -> None:
    """Turning affine off (mine_off, ref_off: the layers built without it) leaves in the
    learner's state_dict none of the entries torch's drops, and adds none of its own: a
    checkpoint of torch's layer without affine loads. Judged on what the flag changes, so that
    an entry both of the learner's layers hold (a cached eps, a running statistic registered
    otherwise) is left to the state_dict round trip's check. `given` names mine_off."""
    on, off = set(mine_on.state_dict()), set(mine_off.state_dict())
    dropped = set(ref_on.state_dict()) - set(ref_off.state_dict())
    if kept := sorted(off & dropped):
        fail(
            f"{given}: its state_dict holds {kept}, which torch's drops without affine: a "
            "checkpoint of torch's layer does not load into it."
        )
    if added := sorted(off - on):
        fail(
            f"{given}: its state_dict holds {added}, which the layer with affine does not: "
            "torch's layer without affine holds nothing of the kind, so its checkpoints do not "
            "load into it."
        )


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
    parameters by name (torch's name, for one that paired() found under another)}. params'
    gradients are cleared first, so that they are this backward's."""
    for p in params.parameters():
        p.grad = None
    out.backward(grad_out)
    torch_name = {attr: name for name, attr in _RENAMED.get(params, {}).items()}
    named = params.named_parameters()
    return {"input": x.grad, **{torch_name.get(n, n): p.grad for n, p in named}}


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
    for name, _ in ref.named_parameters():
        value = vars(mine).get(name)
        if mine_grads.get(name) is None and isinstance(value, torch.Tensor):
            fail_for(
                "test_parameters",
                f"{given}: {name} is a plain tensor attribute, not an nn.Parameter, so autograd "
                "gives it no gradient and an optimizer never trains it.",
            )
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


def without_affine(layer: nn.Module, *, given: str, owner: str) -> nn.Module:
    """layer, built without its affine step (affine=False, elementwise_affine=False) so that a
    check sees the normalization alone, with its forward guarded: an error about None there
    (self.weight.view on None, None * x̂) is the mistake of `owner`, the check of that
    setting, not of the check that needed the setting."""
    import types

    from norm_katas.checks.autograd import learner_line

    def guarded(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
        try:
            return type(self).forward(self, *args, **kwargs)
        except (AttributeError, TypeError) as e:
            if "NoneType" not in str(e):
                raise
            fail_for(
                owner,
                f"{given}: your code raised {type(e).__name__}: {e}{learner_line(e)}. Without "
                "the affine step weight and bias are None, and forward skips the scale and "
                "shift; this check builds the layer so to see the normalization alone.",
            )

    # Bound to the layer: a deepcopy (the simulated CUDA runs one) binds it to the copy.
    layer.forward = types.MethodType(guarded, layer)  # type: ignore[method-assign]
    return layer
