"""The error catalogue: every mistake a learner can make gets PyTorch's first line
(so they recognise it later) and a plain-language second line naming the Function,
the input, the shapes and the likely fix.  Each test checks the type AND key words."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.autograd import Function
from minigrad.autograd.function import once_differentiable


def check_error(excinfo, first_line: str, *names: str) -> str:
    """PyTorch's wording on the first line; every name somewhere in the message."""
    msg = str(excinfo.value)
    head = msg.split("\n", 1)[0]
    assert first_line in head, f"first line {head!r} lacks {first_line!r}"
    for name in names:
        assert name in msg, f"message lacks {name!r}:\n{msg}"
    assert "\n" in msg, "expected a plain-language second line"
    return msg


def leaf(*values, shape=None):
    arr = np.asarray(values if shape is None else np.ones(shape), dtype=np.float32)
    return minigrad.tensor(arr, requires_grad=True)


# --- custom Function mistakes ---------------------------------------------------------------
class TwoInputsOneGrad(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g  # one gradient for two inputs


def test_wrong_number_of_gradients():
    a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
    y = TwoInputsOneGrad.apply(a, b)
    assert y.grad_fn.name() == "TwoInputsOneGradBackward"
    with pytest.raises(RuntimeError) as ei:
        y.sum().backward()
    check_error(ei, "function TwoInputsOneGradBackward returned an incorrect number of gradients (expected 2, got 1)",
                "TwoInputsOneGrad")


class TooManyGrads(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, g


def test_too_many_gradients():
    with pytest.raises(RuntimeError) as ei:
        TooManyGrads.apply(leaf(1.0)).sum().backward()
    check_error(ei, "function TooManyGradsBackward returned an incorrect number of gradients (expected 1, got 2)",
                "TooManyGrads")


class ExtraTrailingNones(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3, None, None  # extra trailing Nones are accepted, as in PyTorch


def test_extra_trailing_nones_accepted():
    x = leaf(1.0, 2.0)
    ExtraTrailingNones.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


class WrongShape(Function):
    @staticmethod
    def forward(ctx, a):
        return a.sum()

    @staticmethod
    def backward(ctx, g):
        return minigrad.ones(4, 5) * g  # input has shape [3]


def test_gradient_of_wrong_shape():
    with pytest.raises(RuntimeError) as ei:
        WrongShape.apply(leaf(1.0, 2.0, 3.0)).backward()
    check_error(ei, "Function WrongShapeBackward returned an invalid gradient at index 0 - got [4, 5] but expected "
                    "shape compatible with [3]", "WrongShape", "[3]")


class GradForNonTensor(Function):
    @staticmethod
    def forward(ctx, a, scale):
        ctx.scale = scale
        return a * scale

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, g.sum()  # scale is a Python float: must be None


def test_non_none_gradient_for_non_tensor_input():
    with pytest.raises(RuntimeError) as ei:
        GradForNonTensor.apply(leaf(1.0, 2.0), 2.0).sum().backward()
    check_error(ei, "function GradForNonTensorBackward returned a gradient different than None at position 2, but the "
                    "corresponding forward input was not a Variable", "GradForNonTensor", "None")


class ReturnsFloat(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return 2.0


class ReturnsArray(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return np.full(g.shape, 2.0)


class ReturnsList(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return [g * 2]  # PyTorch reads a list as one (wrong) gradient, not as a sequence of gradients


@pytest.mark.parametrize("fn, typename", [(ReturnsFloat, "float"), (ReturnsArray, "numpy.ndarray"), (ReturnsList, "list")])
def test_backward_returning_a_non_tensor(fn, typename):
    with pytest.raises(RuntimeError) as ei:  # PyTorch's type for it
        fn.apply(leaf(1.0, 2.0)).sum().backward()
    check_error(ei, f"expected Variable or None (got {typename})", fn.__name__, "Tensor")


class SavesANumber(Function):
    @staticmethod
    def forward(ctx, a, k):
        ctx.save_for_backward(a, k)
        return a * k

    @staticmethod
    def backward(ctx, g):
        return g, None


def test_save_for_backward_of_a_non_tensor():
    with pytest.raises(TypeError) as ei:
        SavesANumber.apply(leaf(1.0), 3)
    check_error(ei, "save_for_backward can only save variables, but argument 1 is of type int", "SavesANumber",
                "ctx")


class SavesInput(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2 * a * g


def test_saved_tensor_modified_in_place():
    x = leaf(1.0, 2.0, 3.0)
    h = x * 1  # non-leaf, so in-place changes are allowed
    y = SavesInput.apply(h)
    h.add_(1)
    assert h._version == 1
    with pytest.raises(RuntimeError) as ei:
        y.sum().backward()
    check_error(ei, "one of the variables needed for gradient computation has been modified by an inplace operation: "
                    "[torch.FloatTensor [3]], which is output 0 of Add, is at version 1; expected version 0 "
                    "instead. Hint: enable anomaly detection to find the operation that failed to compute its "
                    "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).", "SavesInput", "saved_tensors[0]", "clone()")


def test_saved_tensor_modified_in_place_builtin_op():
    x = leaf(0.5, 1.0)
    h = x.exp()
    y = h.sin()  # sin saves its input h
    h.mul_(2)
    with pytest.raises(RuntimeError) as ei:
        y.sum().backward()
    check_error(ei, "one of the variables needed for gradient computation has been modified by an inplace operation",
                "[torch.FloatTensor [2]], which is output 0 of Mul,", "version 1", "SinBackward0")


@pytest.mark.parametrize("op", ["exp", "relu", "sigmoid", "tanh", "sqrt"])
def test_saved_output_modified_in_place(op):
    # These ops save their own output, and their ordinary backward reads it as an array: the version check
    # must still see the in-place change (PyTorch 2.13: "... which is output 0 of Exp, is at version 1").
    x = leaf(0.5, 1.0)
    y = getattr(x, op)()
    y.mul_(2)
    with pytest.raises(RuntimeError) as ei:
        y.sum().backward()
    check_error(ei, "one of the variables needed for gradient computation has been modified by an inplace operation",
                "is at version 1; expected version 0")


def test_saved_tensor_modified_through_setitem():
    x = leaf(1.0, 2.0)
    h = x * 2
    y = h.log()
    h[0] = 5.0
    with pytest.raises(RuntimeError) as ei:
        y.sum().backward()
    check_error(ei, "has been modified by an inplace operation", "LogBackward0")


def test_backward_through_a_freed_graph():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as ei:
        y.backward()
    check_error(ei, "Trying to backward through the graph a second time (or directly access saved tensors after they "
                    "have already been freed)", "MulBackward0", "retain_graph=True")


def test_saved_tensors_after_free():
    x = leaf(1.0, 2.0)
    y = SavesInput.apply(x)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    with pytest.raises(RuntimeError) as ei:
        y.grad_fn.saved_tensors
    check_error(ei, "Trying to backward through the graph a second time", "SavesInput", "retain_graph=True")


def test_retain_graph_keeps_saved_tensors():
    x = leaf(1.0, 2.0)
    y = SavesInput.apply(x)
    y.sum().backward(retain_graph=True)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


# --- backward() call mistakes ----------------------------------------------------------------
def test_non_scalar_backward_without_gradient():
    y = leaf(1.0, 2.0, 3.0) * 2
    with pytest.raises(RuntimeError) as ei:
        y.backward()
    check_error(ei, "grad can be implicitly created only for scalar outputs", "[3]", "ones_like", ".sum()")


def test_gradient_argument_of_wrong_shape():
    y = leaf(1.0, 2.0, 3.0) * 2
    with pytest.raises(RuntimeError) as ei:
        y.backward(minigrad.ones(2))
    check_error(ei, "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of "
                    "torch.Size([3])", "shape")


@pytest.mark.parametrize("make", [
    lambda: minigrad.tensor([1.0, 2.0]).sum(),
    lambda: (minigrad.tensor([1.0], requires_grad=True).detach() * 2).sum(),
    lambda: _under_no_grad(),
], ids=["plain", "detached", "no_grad"])
def test_backward_of_a_tensor_that_needs_no_grad(make):
    y = make()
    with pytest.raises(RuntimeError) as ei:
        y.backward()
    check_error(ei, "element 0 of tensors does not require grad and does not have a grad_fn", "requires_grad=True")


def _under_no_grad():
    x = leaf(1.0, 2.0)
    with minigrad.no_grad():
        return (x * 2).sum()


# --- requires_grad / in-place mistakes -----------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: minigrad.tensor([1, 2, 3], requires_grad=True),
    lambda: minigrad.tensor([1, 2, 3]).requires_grad_(),
    lambda: setattr(minigrad.arange(3), "requires_grad", True),
    lambda: minigrad.zeros(3, dtype=minigrad.int64, requires_grad=True),
    lambda: minigrad.tensor([True, False], requires_grad=True),
], ids=["tensor", "requires_grad_", "attribute", "zeros", "bool"])
def test_requires_grad_on_integer_data(make):
    with pytest.raises(RuntimeError) as ei:
        make()
    check_error(ei, "Only Tensors of floating point and complex dtype can require gradients", "dtype", "float")


@pytest.mark.parametrize("op", [
    lambda x: x.add_(1),
    lambda x: x.mul_(2),
    lambda x: x.sub_(minigrad.ones(3)),
    lambda x: x.div_(2),
    lambda x: x.zero_(),
    lambda x: x.fill_(1.0),
    lambda x: x.clamp_(0, 1),
    lambda x: x.__iadd__(1),
    lambda x: x.__setitem__(0, 5.0),
], ids=["add_", "mul_", "sub_", "div_", "zero_", "fill_", "clamp_", "+=", "setitem"])
def test_in_place_op_on_a_leaf_that_requires_grad(op):
    x = leaf(1.0, 2.0, 3.0)
    with pytest.raises(RuntimeError) as ei:
        op(x)
    check_error(ei, "a leaf Variable that requires grad is being used in an in-place operation.", "no_grad")
    assert x.tolist() == [1.0, 2.0, 3.0]  # nothing was changed
    assert x._version == 0


def test_in_place_op_on_a_view_of_a_leaf():
    x = leaf(1.0, 2.0, 3.0)
    with pytest.raises(RuntimeError) as ei:
        x[1:].add_(1)
    check_error(ei, "a view of a leaf Variable that requires grad is being used in an in-place operation.", "view")


def test_in_place_on_a_leaf_under_no_grad_is_fine():
    x = leaf(1.0, 2.0, 3.0)
    with minigrad.no_grad():
        x.add_(1)
        x[0] = 0.0
    assert x.tolist() == [0.0, 3.0, 4.0]
    assert x.requires_grad and x.is_leaf
    assert x._version == 2


class DirtyNotReturned(Function):
    @staticmethod
    def forward(ctx, a):
        a.mul_(2)
        ctx.mark_dirty(a)
        return a * 1  # a new tensor, not a itself

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_of_an_input_not_returned():
    x = leaf(1.0, 2.0) * 1
    with pytest.raises(RuntimeError) as ei:
        DirtyNotReturned.apply(x)
    check_error(ei, "Some elements marked as dirty during the forward method were not returned as output.",
                "DirtyNotReturned", "mark_dirty")


class NumpyCube(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return minigrad.tensor(a.detach().numpy() ** 3)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return minigrad.tensor(3 * a.detach().numpy() ** 2 * g.detach().numpy())


def test_differentiating_twice_through_once_differentiable():
    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    # the gradient flowing into NumpyCube must itself require grad (as in PyTorch): hence the * x
    y = (NumpyCube.apply(x) * x).sum()
    (g,) = minigrad.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [4.0, 32.0]  # 3x^2 * x + x^3
    with pytest.raises(RuntimeError) as ei:
        g.sum().backward()
    check_error(ei, "trying to differentiate twice a function that was marked with @once_differentiable",
                "NumpyCube", "create_graph")


# --- shape mismatches -------------------------------------------------------------------------
def test_matmul_shape_mismatch_names_both_shapes_and_the_op():
    with pytest.raises(RuntimeError) as ei:
        minigrad.randn(2, 3) @ minigrad.randn(4, 5)
    check_error(ei, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "matmul", "[2, 3]", "[4, 5]",
                "transpose")


def test_matmul_vector_mismatch():
    with pytest.raises(RuntimeError) as ei:
        minigrad.randn(2, 3) @ minigrad.randn(4)
    check_error(ei, "size mismatch, got input (2), mat (2x3), vec (4)", "[2, 3]", "[4]", "matmul")


def test_dot_mismatch():
    with pytest.raises(RuntimeError) as ei:
        minigrad.randn(3) @ minigrad.randn(4)
    check_error(ei, "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements",
                "[3]", "[4]", "matmul")


def test_batched_matmul_mismatch():
    with pytest.raises(RuntimeError) as ei:
        minigrad.randn(2, 2, 3) @ minigrad.randn(3, 3, 2)
    check_error(ei, "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
                "[2, 2, 3]", "[3, 3, 2]", "batch")


def test_mm_needs_matrices():
    with pytest.raises(RuntimeError) as ei:
        minigrad.mm(minigrad.randn(3), minigrad.randn(3, 2))
    check_error(ei, "self must be a matrix", "mm", "[3]", "[3, 2]")


def test_cat_size_mismatch():
    with pytest.raises(RuntimeError) as ei:
        minigrad.cat([minigrad.randn(2, 3), minigrad.randn(2, 4)])
    check_error(ei, "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor "
                    "number 1 in the list.", "[2, 3], [2, 4]", "dim=0")


def test_stack_size_mismatch():
    with pytest.raises(RuntimeError) as ei:
        minigrad.stack([minigrad.randn(2, 3), minigrad.randn(2, 4)])
    check_error(ei, "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1",
                "cat")


def test_expand_mismatch():
    with pytest.raises(RuntimeError) as ei:
        minigrad.randn(2, 3).expand(4, 3)
    check_error(ei, "The expanded size of the tensor (4) must match the existing size (2) at non-singleton dimension 0."
                    "  Target sizes: [4, 3].  Tensor sizes: [2, 3]", "size 1")


def test_index_out_of_bounds():
    with pytest.raises(IndexError) as ei:
        minigrad.randn(2, 3)[:, 5]
    check_error(ei, "index 5 is out of bounds for dimension 1 with size 3", "[2, 3]")


def test_permute_wrong_number_of_dims():
    with pytest.raises(RuntimeError) as ei:
        minigrad.randn(2, 3).permute(1, 0, 2)
    check_error(ei, "number of dimensions in the tensor input does not match the length of the desired ordering of "
                    "dimensions i.e. input.dim() = 2 is not equal to len(dims) = 3", "[2, 3]")


def test_mean_of_integers():
    with pytest.raises(RuntimeError) as ei:
        minigrad.tensor([1, 2]).mean()
    check_error(ei, "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                    "dtype. Got: Long", "float()")


def test_ragged_nested_list():
    with pytest.raises(ValueError) as ei:
        minigrad.tensor([[1, 2], [3, 4], [5]])
    check_error(ei, "expected sequence of length 2 at dim 1 (got 1)", "rectangular")


@pytest.mark.parametrize("op, name", [
    (lambda a, b: a + b, "add"), (lambda a, b: a - b, "sub"), (lambda a, b: a * b, "mul"),
    (lambda a, b: a / b, "div"), (lambda a, b: minigrad.maximum(a, b), "maximum"),
])
def test_broadcast_mismatch_names_both_shapes_and_the_op(op, name):
    with pytest.raises(RuntimeError) as ei:
        op(minigrad.randn(2, 3), minigrad.randn(4))
    check_error(ei, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
                f"In {name}", "[2, 3]", "[4]")


def test_linear_shape_mismatch():
    x, w = minigrad.randn(8, 3), minigrad.randn(5, 4)
    with pytest.raises(RuntimeError) as ei:
        minigrad._ops.linear(x, w)
    check_error(ei, "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x5)", "linear", "[8, 3]", "[5, 4]")


def test_reshape_size_mismatch():
    with pytest.raises(RuntimeError) as ei:
        minigrad.randn(2, 3).reshape(4, 2)
    check_error(ei, "shape '[4, 2]' is invalid for input of size 6", "[2, 3]")


# --- anomaly mode --------------------------------------------------------------------------
def test_nan_in_anomaly_mode_names_the_forward_op():
    x = minigrad.tensor([0.0, 4.0], requires_grad=True)
    y = (x.sqrt() * minigrad.tensor([0.0, 1.0])).sum()  # d sqrt at 0 times 0 -> 0/0 = nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with minigrad.autograd.detect_anomaly():
            y = (x.sqrt() * minigrad.tensor([0.0, 1.0])).sum()
            with pytest.raises(RuntimeError) as ei:
                y.backward()
    check_error(ei, "Function 'SqrtBackward0' returned nan values in its 0th output.", "Sqrt")
    assert not minigrad.autograd.is_anomaly_enabled()


class NanBackward(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


def test_nan_in_anomaly_mode_custom_function_and_forward_location():
    x = leaf(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with minigrad.autograd.set_detect_anomaly(True):
            y = NanBackward.apply(x)
            with pytest.raises(RuntimeError) as ei:
                y.sum().backward()
    msg = check_error(ei, "Function 'NanBackwardBackward' returned nan values in its 0th output.", "NanBackward")
    assert "test_errors.py" in msg  # the forward call site is shown


def test_without_anomaly_mode_nan_passes_silently():
    x = leaf(1.0)
    NanBackward.apply(x).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_anomaly_mode_warns_when_enabled():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with minigrad.autograd.detect_anomaly():
            pass


# --- broadcasting in custom backward: accepted and reduced (PyTorch's sum_to) ---------------
class BroadcastAdd(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g  # output-shaped for both inputs


def test_output_shaped_gradient_for_broadcast_input_is_reduced():
    a = minigrad.tensor(np.ones((2, 3)), requires_grad=True)
    b = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = minigrad.tensor([[1.0], [2.0]], requires_grad=True)
    BroadcastAdd.apply(a, b).sum().backward()
    assert b.grad.shape == (3,) and b.grad.tolist() == [2.0, 2.0, 2.0]
    assert a.grad.shape == (2, 3)
    BroadcastAdd.apply(a, c).sum().backward()
    assert c.grad.shape == (2, 1) and c.grad.tolist() == [[3.0], [3.0]]


def test_output_shaped_gradient_for_scalar_input_is_reduced():
    a = minigrad.tensor(np.ones((2, 3)), requires_grad=True)
    s = minigrad.tensor(2.0, requires_grad=True)
    BroadcastAdd.apply(a, s).sum().backward()
    assert s.grad.shape == () and s.grad.item() == 6.0


def test_gradient_that_cannot_be_reduced_is_an_error():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a.sum(0)

        @staticmethod
        def backward(ctx, g):
            return minigrad.ones(3, 2)  # input is [2, 3]

    with pytest.raises(RuntimeError) as ei:
        Bad.apply(minigrad.ones(2, 3, requires_grad=True)).sum().backward()
    check_error(ei, "returned an invalid gradient at index 0 - got [3, 2] but expected shape compatible with [2, 3]",
                "Bad")


# --- misc PyTorch errors learners meet ---------------------------------------------------------
def test_autograd_grad_unused_input():
    x, z = leaf(1.0), leaf(2.0)
    with pytest.raises(RuntimeError) as ei:
        minigrad.autograd.grad((x * 2).sum(), [x, z])
    check_error(ei, "The differentiated Tensor at index 1 appears to not have been used in the graph. Set "
                    "allow_unused=True", "inputs[1]")


def test_hook_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        minigrad.ones(2).register_hook(lambda g: g)


def test_retain_grad_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        minigrad.ones(2).retain_grad()


def test_numpy_of_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match=re.escape("Can't call numpy() on Tensor that requires grad. Use "
                                                     "tensor.detach().numpy() instead.")):
        leaf(1.0).numpy()


def test_numpy_allowed_under_no_grad_and_inside_forward():
    x = leaf(1.0, 2.0)
    with minigrad.no_grad():
        assert x.numpy().tolist() == [1.0, 2.0]

    class NumpyDouble(Function):  # a.numpy() in forward is common in custom Functions (runs under no_grad)
        @staticmethod
        def forward(ctx, a):
            return minigrad.tensor(a.numpy() * 2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    assert NumpyDouble.apply(x).tolist() == [2.0, 4.0]


def test_non_leaf_requires_grad_false():
    y = leaf(1.0) * 2
    with pytest.raises(RuntimeError) as ei:
        y.requires_grad_(False)
    check_error(ei, "you can only change requires_grad flags of leaf variables.", "MulBackward0", "detach()")


def test_instantiating_a_function_and_calling_it():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = SavesInput()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
        f(leaf(1.0))


def test_backward_not_implemented():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method"):
        NoBackward.apply(leaf(1.0)).sum().backward()


def test_cuda_device_is_a_clear_error():
    # PyTorch built without CUDA raises AssertionError("Torch not compiled with CUDA enabled"); minigrad adds why
    with pytest.raises(AssertionError, match="(?s)^Torch not compiled with CUDA enabled\n.*CPU"):
        minigrad.zeros(2, device="cuda")
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        minigrad.ones(2).to("cuda")


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, a):
        a.add_(1.0)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, g):
        return g


def test_mark_dirty_on_a_leaf_that_requires_grad():
    # PyTorch's wording on this path is "has been used" (the Function already ran), not "is being used"
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError) as ei:
        AddOneInPlace.apply(x)
    check_error(ei, "a leaf Variable that requires grad has been used in an in-place operation.",
                "AddOneInPlace", "clone()")
