"""Convolution and pooling: ``F.conv1d``, ``F.conv2d``, ``F.max_pool2d``, ``F.avg_pool2d`` and their modules.

Vectorized with NumPy's sliding windows: the padded input is viewed (no copy) as an array of windows of
shape (N, C, OH, OW, KH, KW), and the convolution is one ``einsum`` over channels and kernel positions
(``optimize=True`` sends it to BLAS through tensordot). The backward of the input scatters the windows'
gradients back with one vectorized addition per kernel position (KH x KW of them, not per element).

Each is a custom Function with the node name PyTorch gives it (``ConvolutionBackward0``,
``MaxPool2DWithIndicesBackward0``, ``AvgPool2DBackward0``). Their backwards are NumPy formulas, so they
support first derivatives only: a second derivative through them raises a clear error.

Also here: ``pixel_shuffle`` / ``pixel_unshuffle`` (a reshape and a transpose; each one's backward is the
other) and ``adaptive_avg_pool2d`` (two small averaging matrices, ``a @ x @ b.T``), which are
differentiable any number of times.
"""
from __future__ import annotations

import math

import numpy as np

from .._functorch.batched import ascontiguousarray as _ascontiguousarray  # keeps batched arrays (vmap)
from numpy.lib.stride_tricks import sliding_window_view

from .. import _dtype
from .._tensor import Tensor, _check_device
from ..autograd.function import Function, once_differentiable
from . import init
from .module import Module
from .parameter import Parameter

_wrap = Tensor._wrap


def _pair(v, name: str = "") -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * 2
        return tuple(int(i) for i in v)
    return (int(v), int(v))


def _windows(xp: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """(N, C, H, W) -> a view (N, C, OH, OW, KH, KW) of its windows."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    win = sliding_window_view(xp, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw]


def _scatter_windows(gwin: np.ndarray, shape: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """The adjoint of _windows: add each window's gradient back into an array of ``shape`` (padded input)."""
    out = np.zeros_like(gwin, shape=shape)  # (like gwin: batched under vmap)
    n, c, oh, ow, kh, kw = gwin.shape
    (sh, sw), (dh, dw) = stride, dilation
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw] += gwin[..., i, j]
    return out


def _padding(padding, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """(top, bottom, left, right) from an int, a pair, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding == "same":
            if stride != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return tuple(pads)
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    ph, pw = _pair(padding)
    return (ph, ph, pw, pw)


class _Conv2d(Function):
    _node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, stride, pads, dilation, groups):
        xd, wd = x._data, weight._data
        one_d = ctx.one_d = wd.ndim == 3  # conv1d: a height of 1
        if xd.ndim != (3 if one_d else 4):
            raise RuntimeError(f"Expected {2 if one_d else 3}D (unbatched) or "
                               f"{3 if one_d else 4}D (batched) input to conv{1 if one_d else 2}d, but got input of "
                               f"size: {list(xd.shape)}")
        if one_d:
            xd, wd = xd[:, :, None, :], wd[:, :, None, :]
        n, c = xd.shape[:2]
        o, cg, kh, kw = wd.shape
        if c != cg * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(wd.shape)}, expected input"
                               f"{list(xd.shape)} to have {cg * groups} channels, but got {c} channels instead")
        if o % groups:
            raise RuntimeError("out_channels must be divisible by groups")
        if xd.dtype != wd.dtype:
            raise RuntimeError(f"Input type ({_dtype.from_numpy_dtype(xd.dtype)}) and weight type "
                               f"({_dtype.from_numpy_dtype(wd.dtype)}) should be the same")
        top, bottom, left, right = pads
        xp = np.pad(xd, ((0, 0), (0, 0), (top, bottom), (left, right))) if any(pads) else xd
        if xp.shape[2] < (kh - 1) * dilation[0] + 1 or xp.shape[3] < (kw - 1) * dilation[1] + 1:
            raise RuntimeError(f"Calculated padded input size per channel: ({xp.shape[2]} x {xp.shape[3]}). "
                               f"Kernel size: ({(kh - 1) * dilation[0] + 1} x {(kw - 1) * dilation[1] + 1}). Kernel "
                               "size can't be greater than actual input size")
        win = _windows(xp, (kh, kw), stride, dilation)
        oh, ow = win.shape[2:4]
        g = groups
        if g == 1:  # without the group axis: NumPy's einsum finds a faster contraction order
            out = np.einsum("ncyxij,ocij->noyx", win, wd, optimize=True)
        else:
            out = np.einsum("ngcyxij,gocij->ngoyx", win.reshape(n, g, cg, oh, ow, kh, kw),
                            wd.reshape(g, o // g, cg, kh, kw), optimize=True).reshape(n, o, oh, ow)
        if bias is not None:
            out = out + bias._data.reshape(1, o, 1, 1)
        ctx.geometry = (xp.shape, stride, pads, dilation, groups)
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return _wrap(_ascontiguousarray(out[:, :, 0] if one_d else out, dtype=xd.dtype))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        xp_shape, stride, pads, dilation, g = ctx.geometry
        gd, wd, xd = grad._data, weight._data, x._data
        if ctx.one_d:
            gd, wd, xd = gd[:, :, None], wd[:, :, None], xd[:, :, None]
        n, o, oh, ow = gd.shape
        _, cg, kh, kw = wd.shape
        gg = gd.reshape(n, g, o // g, oh, ow)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            if g == 1:
                gwin = np.einsum("noyx,ocij->ncyxij", gd, wd, optimize=True)
            else:
                gwin = np.einsum("ngoyx,gocij->ngcyxij", gg, wd.reshape(g, o // g, cg, kh, kw),
                                 optimize=True).reshape(n, g * cg, oh, ow, kh, kw)
            gxp = _scatter_windows(gwin, xp_shape, stride, dilation)
            top, _, left, _ = pads
            h, w = xd.shape[2:]
            gx = gxp[:, :, top:top + h, left:left + w]
            gx = _wrap(_ascontiguousarray(gx[:, :, 0] if ctx.one_d else gx))
        if ctx.needs_input_grad[1]:
            xp = np.pad(xd, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3]))) if any(pads) else xd
            win = _windows(xp, (kh, kw), stride, dilation)
            if g == 1:
                gw = np.einsum("noyx,ncyxij->ocij", gd, win, optimize=True)
            else:
                gw = np.einsum("ngoyx,ngcyxij->gocij", gg, win.reshape(n, g, cg, oh, ow, kh, kw), optimize=True)
            gw = _wrap(gw.reshape(weight._data.shape).astype(wd.dtype))
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = _wrap(gd.sum(axis=(0, 2, 3)))
        return gx, gw, gb, None, None, None, None


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as PyTorch's) of (N, C, H, W) or (C, H, W) input."""
    stride, dilation = _pair(stride), _pair(dilation)
    pads = _padding(padding, tuple(weight.shape[2:]), dilation, stride)
    if input.ndim == 3:
        return _Conv2d.apply(input.unsqueeze(0), weight, bias, stride, pads, dilation, int(groups)).squeeze(0)
    return _Conv2d.apply(input, weight, bias, stride, pads, dilation, int(groups))


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1) -> Tensor:
    """1-D convolution of (N, C, L) or (C, L) input: conv2d on a height of 1."""
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    one = lambda v: (1, int(v[0] if isinstance(v, (tuple, list)) else v))  # noqa: E731
    if isinstance(padding, str):
        pads = _padding(padding, (1, weight.shape[2]), (1, one(dilation)[1]), one(stride))
    else:
        p = one(padding)[1]
        pads = (0, 0, p, p)
    out = _Conv2d.apply(x, weight, bias, one(stride), pads, one(dilation), int(groups))
    return out.squeeze(0) if unbatched else out


def _pool_geometry(kernel_size, stride, padding, dilation=1):
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _pair(stride)
    pad, dil = _pair(padding), _pair(dilation)
    for p, k in zip(pad, kernel):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={dil[0]}")
    return kernel, stride, pad, dil


class _MaxPool2d(Function):
    _node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, pad, dilation):
        xd = x._data
        ctx.unbatched = xd.ndim == 3  # (C, H, W): PyTorch's node takes it as it is
        if ctx.unbatched:
            xd = xd[None]
        ph, pw = pad
        xp = np.pad(xd, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf) if ph or pw else xd
        win = _windows(xp, kernel, stride, dilation)
        n, c, oh, ow, kh, kw = win.shape
        flat = win.reshape(n, c, oh, ow, kh * kw)
        arg = flat.argmax(axis=-1)
        out = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        ctx.geometry = (xp.shape, kernel, stride, pad, dilation, xd.shape)
        ctx.arg = arg
        # PyTorch's indices: positions in the flattened (unpadded) H x W plane
        i, j = np.divmod(arg, kw)
        rows = np.arange(oh).reshape(1, 1, oh, 1) * stride[0] + i * dilation[0] - ph
        cols = np.arange(ow).reshape(1, 1, 1, ow) * stride[1] + j * dilation[1] - pw
        idx = (rows * xd.shape[3] + cols).astype(np.int64)
        if ctx.unbatched:
            out, idx = out[0], idx[0]
        idx = _wrap(idx)
        ctx.mark_non_differentiable(idx)
        return _wrap(_ascontiguousarray(out)), idx

    @staticmethod
    @once_differentiable
    def backward(ctx, grad, _):
        xp_shape, kernel, stride, pad, dilation, shape = ctx.geometry
        gd = grad._data[None] if ctx.unbatched else grad._data
        kh, kw = kernel
        onehot = (ctx.arg[..., None] == np.arange(kh * kw)).reshape(*ctx.arg.shape, kh, kw)
        gwin = onehot * gd[..., None, None]
        gxp = _scatter_windows(gwin.astype(gd.dtype), xp_shape, stride, dilation)
        ph, pw = pad
        gx = gxp[:, :, ph:ph + shape[2], pw:pw + shape[3]]
        return _wrap(_ascontiguousarray(gx[0] if ctx.unbatched else gx)), None, None, None, None


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,  # noqa: A002
               return_indices: bool = False):
    """The maximum of each window (and, with ``return_indices``, where it is in the H x W plane)."""
    if ceil_mode:
        raise NotImplementedError("minigrad's max_pool2d implements ceil_mode=False only")
    kernel, stride, pad, dil = _pool_geometry(kernel_size, stride, padding, dilation)
    out, idx = _MaxPool2d.apply(input, kernel, stride, pad, dil)
    return (out, idx) if return_indices else out


class _AvgPool2d(Function):
    _node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, pad, count_include_pad, divisor_override):
        xd = x._data
        ctx.unbatched = xd.ndim == 3
        if ctx.unbatched:
            xd = xd[None]
        ph, pw = pad
        xp = np.pad(xd, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else xd
        win = _windows(xp, kernel, stride, (1, 1))
        if divisor_override:
            div = np.asarray(divisor_override, xd.dtype)
        elif count_include_pad or not (ph or pw):
            div = np.asarray(kernel[0] * kernel[1], xd.dtype)
        else:
            ones = np.pad(np.ones(xd.shape[2:], xd.dtype), ((ph, ph), (pw, pw)))
            div = _windows(ones[None, None], kernel, stride, (1, 1)).sum(axis=(-2, -1))
        out = win.sum(axis=(-2, -1)) / div
        ctx.geometry = (xp.shape, kernel, stride, pad, xd.shape)
        ctx.div = div
        return _wrap(_ascontiguousarray(out[0] if ctx.unbatched else out, dtype=xd.dtype))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        xp_shape, (kh, kw), stride, (ph, pw), shape = ctx.geometry
        g = (grad._data[None] if ctx.unbatched else grad._data) / ctx.div
        gwin = np.broadcast_to(g[..., None, None], g.shape + (kh, kw))
        gxp = _scatter_windows(gwin, xp_shape, stride, (1, 1))
        gx = gxp[:, :, ph:ph + shape[2], pw:pw + shape[3]]
        return (_wrap(_ascontiguousarray(gx[0] if ctx.unbatched else gx, dtype=grad._data.dtype)),
                None, None, None, None, None)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """The mean of each window (zero padding counted in the mean unless ``count_include_pad=False``)."""
    if ceil_mode:
        raise NotImplementedError("minigrad's avg_pool2d implements ceil_mode=False only")
    kernel, stride, pad, _ = _pool_geometry(kernel_size, stride, padding)
    return _AvgPool2d.apply(input, kernel, stride, pad, bool(count_include_pad), divisor_override)


# --- modules ------------------------------------------------------------------------------------------------
class _ConvNd(Module):
    """What Conv1d and Conv2d share: parameters, PyTorch's initialisation, the repr."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__()
        _check_device(device)
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(f"minigrad implements padding_mode='zeros' only; got {padding_mode!r}")
        d = self._dims
        norm = (lambda v: tuple(int(i) for i in v) if isinstance(v, (tuple, list)) else (int(v),) * d)
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = norm(kernel_size), norm(stride), norm(dilation)
        self.padding = padding if isinstance(padding, str) else norm(padding)
        self.padding_mode = padding_mode
        np_dtype = _dtype._default[0].np_dtype if dtype is None else _dtype.to_numpy_dtype(dtype)
        self.weight = Parameter(np.empty((out_channels, in_channels // groups, *self.kernel_size), dtype=np_dtype))
        if bias:
            self.bias = Parameter(np.empty((out_channels,), dtype=np_dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv2d(_ConvNd):
    """2-D convolution layer: weight (out_channels, in_channels / groups, kH, kW)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution layer: weight (out_channels, in_channels / groups, k)."""

    _dims = 1

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return conv1d(input, self.weight, self.bias, self.stride[0],
                      self.padding if isinstance(self.padding, str) else self.padding[0], self.dilation[0],
                      self.groups)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride or kernel_size, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor):  # noqa: A002
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                          self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None else kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                          self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


# --- pixel shuffle ----------------------------------------------------------------------------------------------
def _shuffle(a: np.ndarray, r: int) -> np.ndarray:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    *lead, c, h, w = a.shape
    a = a.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    a = a.transpose(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return a.reshape(*lead, c // (r * r), h * r, w * r)


def _unshuffle(a: np.ndarray, r: int) -> np.ndarray:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    *lead, c, h, w = a.shape
    a = a.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    a = a.transpose(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return a.reshape(*lead, c * r * r, h // r, w // r)


class _PixelShuffle(Function):
    _node_name = "PixelShuffleBackward0"

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _wrap(_ascontiguousarray(_shuffle(x._data, r)))

    @staticmethod
    def backward(ctx, grad):
        return _PixelUnshuffle.apply(grad, ctx.r), None


class _PixelUnshuffle(Function):
    _node_name = "PixelUnshuffleBackward0"

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _wrap(_ascontiguousarray(_unshuffle(x._data, r)))

    @staticmethod
    def backward(ctx, grad):
        return _PixelShuffle.apply(grad, ctx.r), None


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r): channels become r x r blocks of pixels. Twice differentiable
    (each backward is the other shuffle)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return _PixelShuffle.apply(input, r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, size, dim in (("height", input.shape[-2], -2), ("width", input.shape[-1], -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    return _PixelUnshuffle.apply(input, r)


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


# --- adaptive average pooling ------------------------------------------------------------------------------------
def _adaptive_matrix(n_in: int, n_out: int, dtype) -> np.ndarray:
    """(n_out, n_in): row i averages PyTorch's window [floor(i*n_in/n_out), ceil((i+1)*n_in/n_out))."""
    i = np.arange(n_out)
    start = (i * n_in) // n_out
    end = -((-(i + 1) * n_in) // n_out)
    cols = np.arange(n_in)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


class _AdaptiveAvgPool2d(Function):
    """``a @ x @ b.T`` over the last two dims; its backward is the same operation with the transposes, so it
    is differentiable any number of times."""

    _node_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, a, b):
        ctx.a, ctx.b = a, b
        return _wrap(_ascontiguousarray(np.einsum("oh,...hw,pw->...op", a, x._data, b, optimize=True)))

    @staticmethod
    def backward(ctx, grad):
        return _AdaptiveAvgPool2d.apply(grad, ctx.a.T, ctx.b.T), None, None


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling to a given (H_out, W_out) (an int for both; None keeps that size), with PyTorch's
    windows; an output of 1 x 1 is the mean over H and W, as PyTorch computes it."""
    if input.ndim not in (3, 4):
        raise ValueError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    h, w = input.shape[-2:]
    oh, ow = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    oh, ow = h if oh is None else int(oh), w if ow is None else int(ow)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"adaptive_avg_pool2d(): output_size must be positive, got ({oh}, {ow})")
    if oh == 1 and ow == 1:
        return input.mean((-2, -1), keepdim=True)
    dtype = input._data.dtype
    return _AdaptiveAvgPool2d.apply(input, _adaptive_matrix(h, oh, dtype), _adaptive_matrix(w, ow, dtype))


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
