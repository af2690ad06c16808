"""Names real PyTorch programs stop on (issue 24): torch.jit.is_scripting / is_tracing, Tensor.type with a
type string, torch.nn.modules.* import paths, torch.utils, torch.matmul(input=..., other=...). Each is
checked on minigrad and, when installed, on PyTorch with the same code."""
from __future__ import annotations

import importlib

import pytest

import minigrad
from _engines import LIBS

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@LIBS
def test_jit_is_scripting_and_is_tracing_are_false_in_eager_code(T):
    assert T.jit.is_scripting() is False
    assert T.jit.is_tracing() is False

    def forward(x):  # the CompressAI pattern
        if not T.jit.is_scripting():
            return x * 2
        return x

    assert forward(T.ones(2)).tolist() == [2.0, 2.0]


@LIBS
@pytest.mark.parametrize("name", DTYPES)
def test_tensor_type_names_each_dtype_and_converts_back(T, name):
    dtype = getattr(T, name)
    x = T.zeros(2, dtype=dtype)
    s = x.type()
    expected = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "int64": "LongTensor",
                "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                "bool": "BoolTensor"}[name]
    assert s == "torch." + expected
    y = T.ones(2).type(s)
    assert y.dtype == dtype
    assert x.type(s) is x  # already of that type: the tensor itself


@LIBS
def test_tensor_type_keeps_the_graph_and_takes_dtypes(T):
    x = T.ones(2, requires_grad=True)
    y = x.type("torch.DoubleTensor")
    assert y.dtype == T.float64 and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.dtype == T.float32 and x.grad.tolist() == [1.0, 1.0]
    assert x.type(T.float64).dtype == T.float64


@LIBS
@pytest.mark.parametrize("bad", ["torch.Foo", "FloatTensor", "float"])
def test_tensor_type_refuses_what_pytorch_refuses(T, bad):
    with pytest.raises(ValueError, match=f"invalid type: '{bad}'"):
        T.ones(2).type(bad)


def test_tensor_type_cuda_string_is_the_cpu_only_error():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        minigrad.ones(2).type("torch.cuda.FloatTensor")


@LIBS
def test_matmul_keyword_names(T):
    a, b = T.ones(2, 3), T.ones(3, 4)
    assert tuple(T.matmul(input=a, other=b).shape) == (2, 4)
    assert tuple(a.matmul(other=b).shape) == (2, 4)
    with pytest.raises(TypeError):
        T.matmul(a, tensor2=b)


IMPORTS = [
    ("nn.modules.module", "Module"), ("nn.modules.linear", "Linear"), ("nn.modules.linear", "Identity"),
    ("nn.modules.activation", "ReLU"), ("nn.modules.activation", "GELU"), ("nn.modules.batchnorm", "_BatchNorm"),
    ("nn.modules.batchnorm", "BatchNorm1d"), ("nn.modules.conv", "Conv2d"), ("nn.modules.conv", "_ConvNd"),
    ("nn.modules.loss", "_Loss"), ("nn.modules.loss", "CrossEntropyLoss"), ("nn.modules.container", "Sequential"),
    ("nn.modules.container", "ModuleList"), ("nn.modules.container", "ModuleDict"), ("nn.modules", "Module"),
    ("nn.modules.pooling", "MaxPool2d"), ("nn.modules.dropout", "Dropout"), ("nn.modules.flatten", "Flatten"),
    ("utils.data", "DataLoader"), ("utils.checkpoint", "checkpoint"), ("autograd.graph", "saved_tensors_hooks"),
]


@LIBS
@pytest.mark.parametrize("path, name", IMPORTS, ids=lambda v: v if isinstance(v, str) else None)
def test_import_paths(T, path, name):
    mod = importlib.import_module(f"{T.__name__}.{path}")
    obj = getattr(mod, name)
    chain = T
    for part in path.split("."):
        chain = getattr(chain, part)  # torch.nn.modules.conv.Conv2d works as attribute access too
    assert getattr(chain, name) is obj


def test_the_classes_behind_the_paths_are_minigrads_own():
    from minigrad.nn.modules.batchnorm import _BatchNorm
    from minigrad.nn.modules.conv import Conv2d
    from minigrad.nn.modules.loss import _Loss

    assert Conv2d is minigrad.nn.Conv2d
    assert isinstance(minigrad.nn.BatchNorm1d(3), _BatchNorm)  # how NAFNet-style code finds its norm layers
    assert not isinstance(minigrad.nn.LayerNorm(3), _BatchNorm)
    assert isinstance(minigrad.nn.MSELoss(), _Loss)


@LIBS
def test_torch_utils_is_reachable_without_an_import(T):
    assert callable(T.utils.checkpoint.checkpoint)
    assert isinstance(T.utils.data.TensorDataset(T.ones(3)), T.utils.data.Dataset)
    g = T.Generator()
    assert g.manual_seed(3) is g and g.initial_seed() == 3
