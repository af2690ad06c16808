"""The Tensor: a NumPy array plus the autograd bookkeeping PyTorch keeps on a tensor.

A tensor knows its data, whether it ``requires_grad``, and (if an operation made it
while grad mode was on) its ``grad_fn``: the backward node that will turn the gradient
of this tensor into gradients of the operation's inputs.  Every operation below is a
``Function`` from ``minigrad._ops``; this file only routes methods and operators to them.
"""
from __future__ import annotations

import numbers
import warnings
import weakref
from typing import Any, Iterator

import numpy as np

from . import _dtype
from ._functorch.batched import BatchedArray as _BatchedArray

_new = object.__new__


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``torch.Size([2, 3])``, like PyTorch's."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))


from ._device import CPU as _CPU  # noqa: E402
from ._device import check_device as _check_device  # noqa: E402,F401  (used by the factories and nn)
from ._device import device  # noqa: E402


# The in-place version counter shared by a tensor, its views and the nodes that saved it: an
# 8-byte little-endian integer in a bytearray, which Python's garbage collector does not track
# (a list [0] would be tracked, and so would the tuples that hold it). Buys: 1.2 fewer tracked
# objects per op of benchmark (a), 40 % less full-collection time in (e) (benchmarks/README.md).
# A node keeps ``bytes(counter)`` as the version it saved, so checking is one memcmp.
_new_counter = bytearray(8).copy  # version 0
_AT_ZERO = bytes(8)  # the snapshot of version 0


def _read_version(vc: bytes | bytearray) -> int:
    return int.from_bytes(vc, "little")


class Tensor:
    """An n-dimensional array that can record the operations applied to it."""

    __slots__ = ("_data", "_rg", "grad_fn", "_grad", "_output_nr", "_vc", "_base", "_extra", "__weakref__")

    # --- construction -------------------------------------------------------------
    def __init__(self, data: Any = (), *, requires_grad: bool = False) -> None:
        # torch.Tensor(data) makes a tensor of the default float dtype.
        from ._factories import _infer  # (not at the top: _factories imports this module)

        arr = _infer(data._data if isinstance(data, Tensor) else data, _dtype._default[0].np_dtype)
        self._init_leaf(arr, requires_grad)

    def _init_leaf(self, arr: np.ndarray, requires_grad: bool) -> None:
        """Fill the fields of a new leaf tensor (constructors of Tensor and its subclasses)."""
        self._data = arr
        self._rg = False
        self.grad_fn = None
        self._grad = None
        self._output_nr = 0
        self._vc = None
        self._base = None
        self._extra = None
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _wrap(arr: np.ndarray) -> "Tensor":
        """Wrap an ndarray without copying (the hot path: one object per operation)."""
        t = _new(Tensor)
        t._data = arr
        t._rg = False
        t.grad_fn = None
        t._grad = None
        t._output_nr = 0
        t._vc = None
        t._base = None
        t._extra = None
        return t

    def _view_of(self, arr: np.ndarray, step: tuple | None = None) -> "Tensor":
        """A tensor that shares memory (and so the in-place version counter) with self.

        ``step`` says how ``arr`` was taken from self (e.g. ``("permute", dims)``, see
        ``_ops.shape.replay_view``); the steps from the base are kept, so that an in-place
        operation on the view can be recorded on the base. None: an alias out of the graph (detach).
        """
        t = Tensor._wrap(arr)
        if self._vc is None:
            self._vc = _new_counter()
        t._vc = self._vc
        if self._base is None:
            t._base = self
            if step is not None:
                t._extra = {"view_steps": (step,)}
        else:
            t._base = self._base
            steps = self._get_extra("view_steps")
            if step is not None and steps is not None:
                t._extra = {"view_steps": steps + (step,)}
        return t

    # --- autograd attributes ------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Ask autograd to track this leaf tensor (only floating tensors may)."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().\n"
                    f"This tensor was made by {self.grad_fn.name()}; call .detach() to get a copy "
                    "that does not track gradients."
                )
            return self
        if requires_grad and self._data.dtype.kind != "f":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients\n"
                f"This tensor has dtype {self.dtype} (shape {list(self.shape)}); gradients are only "
                "defined for real numbers. Make it floating first, e.g. x = x.float() or "
                "tensor([1., 2.], requires_grad=True)."
            )
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for single-output operations)."""
        return self._output_nr

    @property
    def grad(self) -> "Tensor | None":
        if self.grad_fn is not None and not self._get_extra("retains_grad"):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
                "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                "instead.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: got {list(value.shape)}, "
                    f"expected {list(self.shape)} (the shape of the tensor itself)"
                )
        self._grad = value

    @property
    def _version(self) -> int:
        return _read_version(self._vc) if self._vc is not None else 0

    def _bump_version(self) -> None:
        vc = self._vc
        if vc is None:
            vc = self._vc = _new_counter()
        if vc[0] != 255:
            vc[0] += 1  # the low byte, no carry: the common case (an optimizer bumps every parameter every step)
        else:
            vc[:] = (_read_version(vc) + 1).to_bytes(8, "little")

    def _get_extra(self, key: str, default: Any = None) -> Any:
        return default if self._extra is None else self._extra.get(key, default)

    def _set_extra(self, key: str, value: Any) -> None:
        if self._extra is None:
            self._extra = {}
        self._extra[key] = value

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` after backward."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._get_extra("retains_grad"):
            return
        self._set_extra("retains_grad", True)
        ref = weakref.ref(self)  # weak: the node must not keep its output alive (no cycles)
        self.grad_fn._add_retain_grad(self._output_nr, ref)

    @property
    def retains_grad(self) -> bool:
        return bool(self._get_extra("retains_grad"))

    def register_hook(self, hook) -> "RemovableHandle":
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        hooks = self._get_extra("hooks")
        if hooks is None:
            hooks = {}
            self._set_extra("hooks", hooks)
        _note_leaf_hook(self)  # backward() now runs PyTorch's node order (engine.py)
        return RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook) -> "RemovableHandle":
        """Call ``hook(self)`` after backward has accumulated a gradient into this leaf's ``.grad``.

        The hook returns None (it may change ``self.grad`` in place, e.g. an optimizer step).
        It runs when the leaf's AccumulateGrad node runs: after ``backward()`` and
        ``backward(inputs=...)``, not after ``autograd.grad`` (which accumulates nothing).
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors\n"
                "Only a leaf has a .grad to accumulate into; for a tensor computed from others, use "
                "register_hook(fn), which is called with its gradient.")
        hooks = self._get_extra("post_accumulate_hooks")
        if hooks is None:
            hooks = {}
            self._set_extra("post_accumulate_hooks", hooks)
        _note_leaf_hook(self)  # backward() now runs PyTorch's node order (engine.py)
        return RemovableHandle(hooks, hook)

    def _grad_accumulator(self):
        """The AccumulateGrad node of this leaf (one per leaf, held weakly: no cycle)."""
        extra = self._extra
        ref = extra.get("acc") if extra is not None else None
        node = ref() if ref is not None else None
        if node is None:
            # A new one after each graph is gone (a parameter's, every training step): no import here,
            # which cost 1 us of the 3 an MLP layer's forward adds (benchmark (c)).
            node = _AccumulateGrad(self)
            self._set_extra("acc", weakref.ref(node))
        return node

    def backward(self, gradient: "Tensor | None" = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs=None) -> None:
        """Compute the gradient of this tensor w.r.t. graph leaves and accumulate it in their ``.grad``."""
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        _engine_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> "Tensor":
        """A tensor sharing this data (and its version counter) that is out of the graph."""
        return self._view_of(self._data)

    def detach_(self) -> "Tensor":
        if self._base is not None and self._base._rg:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def data(self) -> "Tensor":
        # Like PyTorch's .data: shares memory, but NOT the version counter, so in-place
        # changes through it are invisible to autograd (the reason .detach() is preferred).
        return Tensor._wrap(self._data)

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    # --- metadata -----------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        if not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype._FROM_NUMPY[self._data.dtype]

    @property
    def device(self) -> device:
        return _CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous (shape {list(self.shape)}); "
                "use .any() or .all()"
            )
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    # --- conversion ---------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying ndarray (shares memory)."""
        if self._rg and not force and _grad_enabled():
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self._data.__class__ is _BatchedArray:  # inside vmap: one array per sample, none for all of them
            raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage\nInside vmap this "
                               "tensor holds one value per sample; compute with minigrad operations instead of NumPy.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self._data
        return arr.astype(dtype) if dtype is not None else arr

    def item(self) -> Any:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar\n"
                f"item() needs exactly one element; this tensor has shape {list(self.shape)}. "
                "Reduce it first (e.g. .sum()) or use .tolist()."
            )
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def to(self, *args, **kwargs) -> "Tensor":
        """Convert dtype; ``'cpu'`` / ``device('cpu')`` are accepted and change nothing."""
        dtype = kwargs.pop("dtype", None)
        _check_device(kwargs.pop("device", None))
        kwargs.pop("non_blocking", None)
        kwargs.pop("copy", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            else:
                _check_device(a)
        if dtype is None or dtype.np_dtype == self._data.dtype:
            return self
        return _ops.ToDtype.apply(self, dtype)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """``x.type()``: PyTorch's type string ('torch.FloatTensor'); ``x.type(t)``: ``x.to(t)``, with ``t`` a
        dtype or a type string such as 'torch.DoubleTensor'."""
        from . import _tensor_types

        if dtype is None:
            return _tensor_types.type_string(self.dtype)
        if isinstance(dtype, str):
            dtype = _tensor_types.dtype_of(dtype)
        return self.to(dtype)

    def cpu(self) -> "Tensor":
        return self

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> "Tensor":
        from ._device import not_compiled_with_cuda

        raise not_compiled_with_cuda()

    def float(self) -> "Tensor":
        return self.to(_dtype.float32)

    def double(self) -> "Tensor":
        return self.to(_dtype.float64)

    def half(self) -> "Tensor":
        return self.to(_dtype.float16)

    def long(self) -> "Tensor":
        return self.to(_dtype.int64)

    def int(self) -> "Tensor":
        return self.to(_dtype.int32)

    def bool(self) -> "Tensor":
        return self.to(_dtype.bool)

    def clone(self) -> "Tensor":
        return _ops.Clone.apply(self)

    def contiguous(self, memory_format=None) -> "Tensor":
        return self

    def is_contiguous(self, memory_format=None) -> bool:
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim: int | None = None):
        """Steps in elements between neighbours along each dim (NumPy's strides / itemsize)."""
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim, "stride")]

    def data_ptr(self) -> int:
        return int(self._data.ctypes.data)

    def _is_view(self) -> bool:
        """True for the result of a view operation (x[0], x.T, x.view(...)): it shares memory with ``_base``."""
        return self._base is not None and self._get_extra("view_steps") is not None

    def is_inference(self) -> bool:
        return False


    def __repr__(self) -> str:
        return _printing.tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data, self._rg))

    # --- arithmetic operators -----------------------------------------------------
    def __add__(self, other):
        if isinstance(other, Tensor):
            return _apply_pair(_ops.Add, self, other)
        return _apply_first(_ops.AddScalar, self, _scalar(other, "add"))

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Tensor):
            return _apply_pair(_ops.Sub, self, other)
        return _apply_first(_ops.SubScalar, self, _scalar(other, "sub"))

    def __rsub__(self, other):
        return _apply_first(_ops.RSubScalar, self, _scalar(other, "rsub"))

    def __mul__(self, other):
        if isinstance(other, Tensor):
            return _apply_pair(_ops.Mul, self, other)
        return _apply_first(_ops.MulScalar, self, _scalar(other, "mul"))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Tensor):
            return _apply_pair(_ops.Div, self, other)
        return _apply_first(_ops.DivScalar, self, _scalar(other, "div"))

    def __rtruediv__(self, other):
        return _apply_first(_ops.RDivScalar, self, _scalar(other, "div"))

    def __pow__(self, other):
        if isinstance(other, Tensor):
            return _apply_pair(_ops.Pow, self, other)
        return _apply_first(_ops.PowScalar, self, _scalar(other, "pow"))

    def __rpow__(self, other):
        return _apply_first(_ops.RPowScalar, self, _scalar(other, "pow"))

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(_as_tensor(other), self)

    def __neg__(self):
        return _apply_first(_ops.Neg, self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _apply_first(_ops.Abs, self)

    # In-place operators go through the in-place methods (version counter, leaf checks).
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # --- comparisons (bool results, never differentiable) -------------------------
    def _compare(self, other, ufunc):
        o = other._data if isinstance(other, Tensor) else other
        try:
            return Tensor._wrap(ufunc(self._data, o))
        except ValueError:
            from ._ops.arithmetic import _broadcast_error

            raise _broadcast_error(ufunc.__name__, self._data, np.asarray(o)) from None

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    def __eq__(self, other):  # type: ignore[override]
        return self._compare(other, np.equal)

    def __ne__(self, other):  # type: ignore[override]
        return self._compare(other, np.not_equal)

    lt, le, gt, ge, eq, ne = __lt__, __le__, __gt__, __ge__, __eq__, __ne__

    def __and__(self, other):
        return self._compare(other, np.logical_and if self._data.dtype == np.bool_ else np.bitwise_and)

    def __or__(self, other):
        return self._compare(other, np.logical_or if self._data.dtype == np.bool_ else np.bitwise_or)

    def __invert__(self):
        return Tensor._wrap(~self._data)

    def logical_not(self):
        return Tensor._wrap(np.logical_not(self._data))

    def isnan(self):
        return Tensor._wrap(np.isnan(self._data))

    def isfinite(self):
        return Tensor._wrap(np.isfinite(self._data))

    def any(self, dim=None, keepdim=False):
        return Tensor._wrap(np.any(self._data, axis=dim, keepdims=keepdim))

    def all(self, dim=None, keepdim=False):
        return Tensor._wrap(np.all(self._data, axis=dim, keepdims=keepdim))

    def equal(self, other) -> bool:
        return self._data.shape == other._data.shape and bool(np.array_equal(self._data, other._data))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(np.allclose(self._data, _data_of(other), rtol=rtol, atol=atol, equal_nan=equal_nan))

    # --- indexing -----------------------------------------------------------------
    def __getitem__(self, index):
        return _ops.index(self, index)

    def __setitem__(self, index, value) -> None:
        _ops.index_put_(self, index, value)

    # --- in-place methods ---------------------------------------------------------
    def add_(self, other, alpha=1):
        if alpha != 1:
            other = other * alpha
        return _ops.inplace(self, "add", other)

    def sub_(self, other, alpha=1):
        if alpha != 1:
            other = other * alpha
        return _ops.inplace(self, "sub", other)

    def mul_(self, other):
        return _ops.inplace(self, "mul", other)

    def div_(self, other):
        return _ops.inplace(self, "div", other)

    def clamp_(self, min=None, max=None):  # noqa: A002
        return _ops.inplace(self, "clamp", min, max)

    def fill_(self, value):
        return _ops.inplace(self, "fill", value)

    def zero_(self):
        return _ops.inplace(self, "fill", 0)

    def copy_(self, src):
        return _ops.inplace(self, "copy", src)

    def relu_(self):
        return _ops.inplace(self, "clamp", 0, None)


def _scalar(value, op: str):
    if isinstance(value, (numbers.Number, np.number, np.bool_)):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(
            f"{op}: expected a Tensor or a Python number as the other operand, got {type(value).__name__}; "
            "wrap it with minigrad.tensor(...) first"
        )
    raise TypeError(
        f"unsupported operand for {op}: Tensor and {type(value).__name__} "
        "(expected a Tensor or a Python number)"
    )


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor._wrap(np.asarray(value))


def _data_of(value):
    return value._data if isinstance(value, Tensor) else value


def _grad_enabled() -> bool:
    from .autograd.grad_mode import _GradMode  # imported here: autograd imports this module

    return _GradMode.enabled


def _wrap_dim(dim: int, ndim: int, where: str) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})\n"
            f"In {where}: the tensor has {ndim} dimension(s), so dim must be in [{-n}, {n - 1}]."
        )
    return dim % n


def _rebuild(data, requires_grad):
    t = Tensor._wrap(data)
    t._rg = requires_grad
    return t


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: dict, hook) -> None:
        RemovableHandle._next_id += 1
        self.id = RemovableHandle._next_id
        self._hooks_ref = hooks
        hooks[self.id] = hook

    def remove(self) -> None:
        self._hooks_ref.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


from . import _ops  # noqa: E402  (the op catalogue needs Tensor defined first)
from .autograd._builtin import _apply_first, _apply_pair  # noqa: E402  (the operators' hot path)
from .autograd.function import AccumulateGrad as _AccumulateGrad  # noqa: E402
from .autograd.engine import backward as _engine_backward  # noqa: E402  (no import per backward(): 1 us)
from .autograd.engine import _note_leaf_hook  # noqa: E402
from . import _printing  # noqa: E402
