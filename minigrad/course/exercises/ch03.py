"""Checks for chapter 3 (ReLU as a custom Function): Leaky ReLU, a mask-saving ReLU, ReLU6."""
from __future__ import annotations

import minigrad
from minigrad.course import CheckFailed, exercise
from minigrad.course._i18n import _
from minigrad.course.diagnose import diagnose_function


def _grad_at(fn, values, *args):
    """Gradient of fn.apply(x, *args).sum() at the given float64 values (a list of floats)."""
    x = minigrad.tensor(values, dtype=minigrad.float64, requires_grad=True)
    fn.apply(x, *args).sum().backward()
    if x.grad is None:
        raise CheckFailed(_("backward gave x no gradient at all: does backward return the gradient "
                            "(not store it on ctx)?"))
    return x.grad.tolist()


@exercise("ch03-ex1", points=2, title="Leaky ReLU",
          minutes=20, objective="pass a non-tensor argument through ctx and follow PyTorch's convention at the kink")
def _check_leaky_relu(LeakyReLUFunction, negative_slope=0.2):
    def reference(x, slope):
        return minigrad.where(x > 0, x, x * slope)

    result = diagnose_function(LeakyReLUFunction, reference, inputs=[(4, 5)], args=(negative_slope,),
                               arg_names=["negative_slope"], kinks=[0.0],
                               at_kinks={0.0: (negative_slope, "PyTorch's leaky_relu: 'x > 0' gets 1, "
                                                               "everything else the slope")})
    if not result.passed:
        return result
    try:
        got_default = _grad_at(LeakyReLUFunction, [-1.0])[0]
    except TypeError as e:
        raise CheckFailed(_("LeakyReLUFunction.apply(x) without a slope failed ({error}): give forward's "
                            "negative_slope a default value of 0.01.").format(error=e)) from None
    if abs(got_default - 0.01) > 1e-12:
        raise CheckFailed(_("with the default slope, the gradient at x = -1 should be 0.01, got {got}.")
                          .format(got=f"{got_default:g}"))
    return result.message + "\n  - " + _("the default slope is 0.01")


def _saved_mask(fn, shape=(4, 5)):
    """(saved tensors, bytes they hold, input) of one call on a random input."""
    x = minigrad.randn(*shape, dtype=minigrad.float64, requires_grad=True)
    saved = fn.apply(x).grad_fn.saved_tensors
    return saved, sum(t.numel() * t.element_size() for t in saved if t is not None), x


@exercise("ch03-ex2", points=2, title="A one-byte mask",
          minutes=15, objective="save a one-byte bool mask instead of a float tensor")
def _check_relu_mask(ReLUMaskFunction):
    result = diagnose_function(ReLUMaskFunction, lambda x: minigrad.relu(x), inputs=[(4, 5)], kinks=[0.0],
                               at_kinks={0.0: (0.0, "torch.relu's convention")})
    if not result.passed:
        return result
    saved, nbytes, x = _saved_mask(ReLUMaskFunction)
    if len(saved) != 1:
        raise CheckFailed(_("the gradients are right, but forward saved {n} tensors; save exactly one, "
                            "the bool mask.").format(n=len(saved)))
    (mask,) = saved
    if mask is None or mask.dtype != minigrad.bool:
        dtype = None if mask is None else mask.dtype
        raise CheckFailed(_("the gradients are right, but the saved tensor has dtype {dtype}; save a bool mask "
                            "such as input > 0 (1 byte per element instead of {size}).")
                          .format(dtype=dtype, size=x.element_size()))
    if tuple(mask.shape) != tuple(x.shape):
        raise CheckFailed(_("the saved mask has shape {mask_shape}, the input {input_shape}: "
                            "save one bit of information per input element.")
                          .format(mask_shape=tuple(mask.shape), input_shape=tuple(x.shape)))
    return result.message + "\n  - " + _("it saves one bool mask ({nbytes} bytes for {n} elements)").format(
        nbytes=nbytes, n=x.numel())


@exercise("ch03-ex3", points=3, title="ReLU6",
          minutes=25, objective="handle two kinks and test a backward with gradcheck away from them")
def _check_relu6(ReLU6Function):
    def reference(x):
        return x.clamp(0, 6)  # right away from the kinks; the kinks are checked by at_kinks

    result = diagnose_function(ReLU6Function, reference, inputs=[(5, 6)], kinks=[0.0, 6.0], low=-3.0, high=9.0,
                               at_kinks={0.0: (0.0, "PyTorch's relu6: 0 at both kinks"),
                                         6.0: (0.0, "PyTorch's relu6: 0 at both kinks")})
    if not result.passed:
        return result
    saved, nbytes, x = _saved_mask(ReLU6Function, (5, 6))
    msg = result.message
    if nbytes > x.numel():
        msg += "\n" + _("Tip: forward saves {nbytes} bytes for {n} elements; one bool mask "
                         "(input > 0) & (input < 6) would need only {n}.").format(nbytes=nbytes, n=x.numel())
    return msg
