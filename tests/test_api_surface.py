"""The API surface of issue 12: every listed name exists (and PyTorch's tensor methods among them are methods
too), CPU-only device code runs, old names work, missing names say so, and a PyTorch program written with
these names runs unchanged on minigrad and prints what PyTorch prints."""
from __future__ import annotations

import contextlib
import io
import pickle
import warnings

import numpy as np
import pytest

import minigrad
from minigrad import nn
from minigrad.nn import functional as F

MODULE_FUNCTIONS = """
acos asin atan atan2 ceil floor round trunc erf expm1 log10 log2 log1p reciprocal rsqrt remainder fmod lerp heaviside
logaddexp nan_to_num eq ne lt le gt ge isclose isinf isfinite logical_and logical_or logical_not all any prod cumprod
sort argsort topk median unique nonzero gather scatter index_select masked_fill addmm bmm einsum tensordot outer kron
trace diag diagonal tril triu det inverse flip tile repeat_interleave chunk split unbind vstack hstack multinomial
finfo iinfo inference_mode set_printoptions set_default_device compile
""".split()
TENSOR_METHODS = """
addmm bmm chunk split repeat flip type_as index_add_ scatter_ masked_fill_ exp_ log_ uniform_ normal_ cuda
""".split()
NN_CLASSES = """
ModuleDict BCEWithLogitsLoss L1Loss Dropout Embedding LayerNorm BatchNorm1d GELU SiLU LeakyReLU ELU Softplus Hardtanh
Identity Flatten Conv1d Conv2d MaxPool2d AvgPool2d PixelShuffle PixelUnshuffle AdaptiveAvgPool2d
""".split()
FUNCTIONAL = """
binary_cross_entropy_with_logits l1_loss dropout gelu silu leaky_relu elu softplus hardtanh one_hot pad normalize
conv1d conv2d max_pool2d avg_pool2d pixel_shuffle pixel_unshuffle adaptive_avg_pool2d
""".split()
# Issue 24: dotted names that real programs import or call, as "module.path:attribute"
ISSUE_24_NAMES = """
autograd.graph:saved_tensors_hooks autograd.graph:save_on_cpu autograd.graph:disable_saved_tensors_hooks
autograd.graph:Node autograd.graph:GradientEdge autograd.graph:get_gradient_edge autograd.graph:increment_version
utils.checkpoint:checkpoint utils.checkpoint:checkpoint_sequential utils.checkpoint:CheckpointError
utils.data:Dataset utils.data:IterableDataset utils.data:TensorDataset utils.data:DataLoader utils.data:default_collate
utils.data:Subset utils.data:random_split utils.data:RandomSampler utils.data:SequentialSampler utils.data:BatchSampler
jit:is_scripting jit:is_tracing :Generator nn.modules:Module nn.modules.module:Module nn.modules.linear:Linear
nn.modules.activation:ReLU nn.modules.batchnorm:_BatchNorm nn.modules.batchnorm:BatchNorm1d nn.modules.conv:Conv2d
nn.modules.conv:Conv1d nn.modules.loss:_Loss nn.modules.loss:MSELoss nn.modules.container:Sequential
nn.modules.container:ModuleList nn.modules.pooling:MaxPool2d nn.modules.flatten:Flatten
nn.modules.pixelshuffle:PixelShuffle autograd.function:Function
func:grad func:grad_and_value func:vjp func:jacrev func:hessian func:functional_call
autograd.functional:vjp autograd.functional:jvp autograd.functional:jacobian autograd.functional:hessian
autograd.functional:hvp autograd.functional:vhp
autograd:forward_ad autograd.forward_ad:dual_level autograd.forward_ad:make_dual autograd.forward_ad:unpack_dual
autograd.forward_ad:enter_dual_level autograd.forward_ad:exit_dual_level autograd.forward_ad:UnpackedDualTensor
func:jvp func:jacfwd
:vmap func:vmap
""".split()


@pytest.mark.parametrize("name", MODULE_FUNCTIONS)
def test_module_function_exists(name):
    assert callable(getattr(minigrad, name))


def test_tensor_methods_cover_pytorchs_for_the_listed_functions():
    torch = pytest.importorskip("torch")
    expected = [n for n in MODULE_FUNCTIONS if hasattr(torch.Tensor, n)] + TENSOR_METHODS
    missing = [n for n in expected if not callable(getattr(minigrad.Tensor, n, None))]
    assert missing == []


@pytest.mark.parametrize("dotted", ISSUE_24_NAMES)
def test_issue_24_name_exists(dotted):
    """Each name is reachable both as an attribute chain (torch.utils.data.DataLoader) and by import."""
    import importlib

    path, _, attr = dotted.partition(":")
    obj = minigrad
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    assert getattr(obj, attr) is getattr(importlib.import_module("minigrad" + ("." + path if path else "")), attr)


def test_issue_24_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    import importlib

    for dotted in ISSUE_24_NAMES:
        path, _, attr = dotted.partition(":")
        assert hasattr(importlib.import_module("torch" + ("." + path if path else "")), attr), dotted


@pytest.mark.parametrize("name", TENSOR_METHODS)
def test_tensor_method_exists(name):
    assert callable(getattr(minigrad.Tensor, name))


@pytest.mark.parametrize("name", NN_CLASSES)
def test_nn_class_exists(name):
    assert issubclass(getattr(nn, name), nn.Module)


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_exists(name):
    assert callable(getattr(F, name))


def test_every_minigrad_name_is_a_pytorch_name():
    """minigrad's public names are PyTorch's (nothing invented that would not transfer)."""
    from minigrad._torch_api import NAMES

    own_extras = {"viz", "course", "Size", "get_printoptions", "annotations"}  # minigrad's own tools, __future__
    for namespace, module in (("", minigrad), ("nn", nn), ("nn.functional", F)):
        torch_names = set(NAMES[namespace].split())
        public = {n for n in dir(module) if not n.startswith("_") and not isinstance(getattr(module, n), type(np))}
        assert public - torch_names - own_extras == set(), namespace


# --- devices: CPU-only code runs ---------------------------------------------------------------------------------
def test_cpu_only_boilerplate_runs():
    torch = minigrad
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Linear(3, 2).to(device)
    x = torch.randn(4, 3, device=device)
    assert model(x).shape == (4, 2) and device == "cpu"
    assert torch.cuda.device_count() == 0 and not torch.backends.mps.is_available()
    assert not torch.accelerator.is_available() and torch.accelerator.device_count() == 0
    torch.set_default_device("cpu")
    assert torch.get_default_device() == torch.device("cpu")
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
        torch.set_default_device("cuda")  # (PyTorch accepts it and fails at the first tensor; minigrad says it now)
    torch.cuda.manual_seed_all(0)  # seeding recipes call these: accepted
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


@pytest.mark.parametrize("source", [
    "torch.zeros(1).cuda()", "torch.zeros(1).to('cuda')", "torch.zeros(1, device='cuda')",
    "torch.zeros(1).to(torch.device('cuda:0'))", "torch.zeros(1).to('mps')", "torch.cuda.current_device()",
    "torch.device('tpu')", "torch.nn.Linear(2, 2).cuda()", "torch.nn.Linear(2, 2).to('cuda')",
])
def test_device_errors_match_torch(source):
    torch = pytest.importorskip("torch")
    from optable import first_line

    mine, theirs = first_line(minigrad, source), first_line(torch, source)
    assert mine == theirs
    assert mine[0] is not None


def test_device_objects_match_torch():
    torch = pytest.importorskip("torch")
    for spec in ("'cpu'", "'cuda'", "'cuda:1'", "'cuda', 0", "'mps'", "'cpu', 0"):
        m, t = eval(f"torch.device({spec})", {"torch": minigrad}), eval(f"torch.device({spec})", {"torch": torch})
        assert (repr(m), str(m), m.type, m.index) == (repr(t), str(t), t.type, t.index)
    assert (minigrad.device("cpu") == "cpu") == (torch.device("cpu") == "cpu")


# --- old names ---------------------------------------------------------------------------------------------------
def test_variable_returns_the_tensor():
    from minigrad.autograd import Variable

    t = minigrad.ones(2)
    v = Variable(t, requires_grad=True)
    assert v is t and v.requires_grad and isinstance(t, Variable)


def test_saved_variables_warns_as_pytorch():
    class Double(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_variables
            return g * 2

    x = minigrad.ones(2, requires_grad=True)
    with pytest.warns(DeprecationWarning, match="^'saved_variables' is deprecated; use 'saved_tensors'$"):
        Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_jit_script_and_compile_are_identity_decorators_that_warn_once(monkeypatch):
    from minigrad import jit

    monkeypatch.setattr(jit, "_warned", set())

    def f(x):
        return x * 2

    with pytest.warns(UserWarning, match="minigrad does not compile"):
        assert minigrad.jit.script(f) is f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert minigrad.jit.script(f) is f  # once
    with pytest.warns(UserWarning, match="torch.compile returns the function unchanged"):
        model = nn.Linear(2, 2)
        assert minigrad.compile(model) is model
    assert minigrad.compile(mode="max-autotune")(f) is f


def test_inference_mode():
    x = minigrad.ones(2, requires_grad=True)
    with minigrad.inference_mode():
        assert not minigrad.is_grad_enabled() and minigrad.is_inference_mode_enabled()
        assert (x * 2).grad_fn is None
    assert minigrad.is_grad_enabled() and not minigrad.is_inference_mode_enabled()
    with minigrad.inference_mode(False):
        assert (x * 2).grad_fn is not None

    @minigrad.inference_mode()
    def predict(t):
        return t * 2

    assert predict(x).grad_fn is None


# --- missing names say so -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("get, first, second", [
    (lambda: minigrad.conv2d, "minigrad does not implement torch.conv2d (PyTorch API)", "convolution"),
    (lambda: nn.Conv3d, "minigrad does not implement torch.nn.Conv3d (PyTorch API)", "nn.Conv2d"),
    (lambda: nn.LSTM, "minigrad does not implement torch.nn.LSTM (PyTorch API)", "loop over the time steps"),
    (lambda: F.conv_transpose2d, "minigrad does not implement torch.nn.functional.conv_transpose2d (PyTorch API)",
     "convolution"),
    (lambda: minigrad.ones(1).pin_memory, "minigrad does not implement torch.Tensor.pin_memory (PyTorch API)", "CPU"),
    (lambda: minigrad.complex64, "minigrad does not implement torch.complex64 (PyTorch API)", "real"),
    (lambda: minigrad.optim.AdamW, "minigrad does not implement torch.optim.AdamW (PyTorch API)", "decoupled"),
    (lambda: minigrad.optim.lr_scheduler, "minigrad does not implement torch.optim.lr_scheduler (PyTorch API)",
     "param_groups"),
    (lambda: minigrad.optim.Adma, "module 'minigrad.optim' has no attribute 'Adma'", "Did you mean: 'Adam'?"),
    (lambda: nn.init.orthogonal_, "minigrad does not implement torch.nn.init.orthogonal_ (PyTorch API)", None),
    (lambda: nn.init.xavier_unifrom_, "module 'minigrad.nn.init' has no attribute 'xavier_unifrom_'",
     "Did you mean: 'xavier_uniform_'"),
    (lambda: minigrad.linalg.svd, "minigrad does not implement torch.linalg.svd (PyTorch API)", "numpy.linalg"),
    (lambda: minigrad.autograd.profiler, "minigrad does not implement torch.autograd.profiler (PyTorch API)", None),
    (lambda: minigrad.tensr, "module 'minigrad' has no attribute 'tensr'", "Did you mean: 'tensor'?"),
    (lambda: nn.Linaer, "module 'minigrad.nn' has no attribute 'Linaer'", "Did you mean: 'Linear'?"),
    (lambda: minigrad.ones(1).sume, "'Tensor' object has no attribute 'sume'", None),  # (Python suggests 'sum')
], ids=["conv2d", "nn.Conv3d", "nn.LSTM", "F.conv_transpose2d", "pin_memory", "complex64", "optim.AdamW", "lr_scheduler",
        "optim-typo", "init.orthogonal_", "init-typo", "linalg.svd",
        "autograd.profiler", "typo", "nn-typo", "tensor-typo"])
def test_missing_names_say_what_is_missing(get, first, second):
    with pytest.raises(AttributeError) as ei:
        get()
    lines = str(ei.value).split("\n")
    assert lines[0] == first
    if second is not None:
        assert second in lines[1]


def test_torch_name_list_is_pytorchs():
    """minigrad/_torch_api.py lists the public names of PyTorch 2.13 (regenerate with this file's main)."""
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != "2.13.0":
        pytest.skip("the list is PyTorch 2.13's")
    # In a fresh process: PyTorch adds public names to its namespace when it imports parts of itself lazily
    # (running torch.utils.checkpoint imports torch._dynamo, which adds torch.onnx), so a test that ran
    # PyTorch earlier in this process would change what dir(torch) shows here.
    import inspect
    import json
    import subprocess
    import sys

    code = inspect.getsource(_generate_names) + "\nimport json, torch\nprint(json.dumps(_generate_names(torch)))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == __import__("minigrad._torch_api", fromlist=["NAMES"]).NAMES


def _generate_names(torch) -> dict:
    import torch.nn.functional as tF

    spaces = {"": torch, "Tensor": torch.Tensor, "nn": torch.nn, "nn.functional": tF, "nn.init": torch.nn.init,
              "cuda": torch.cuda, "autograd": torch.autograd, "optim": torch.optim, "linalg": torch.linalg}
    import textwrap

    return {k: "\n" + "\n".join(textwrap.wrap(" ".join(sorted(n for n in dir(v) if not n.startswith("_"))), 112))
            + "\n" for k, v in spaces.items()}


# --- odds and ends -----------------------------------------------------------------------------------------------
def test_finfo_iinfo_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("float16", "float32", "float64"):
        m, t = minigrad.finfo(getattr(minigrad, name)), torch.finfo(getattr(torch, name))
        assert (m.eps, m.max, m.min, m.tiny, m.bits, m.resolution) == (t.eps, t.max, t.min, t.tiny, t.bits, t.resolution)
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        m, t = minigrad.iinfo(getattr(minigrad, name)), torch.iinfo(getattr(torch, name))
        assert (m.max, m.min, m.bits) == (t.max, t.min, t.bits)
    assert repr(minigrad.finfo(minigrad.float32)) == repr(torch.finfo(torch.float32))


@pytest.mark.parametrize("options", [dict(precision=2), dict(sci_mode=True), dict(threshold=5, edgeitems=2),
                                     dict(linewidth=30), dict(profile="short"), dict(precision=6, sci_mode=False)])
def test_set_printoptions_matches_torch(options):
    torch = pytest.importorskip("torch")
    data = np.linspace(-3.14159, 2.71828, 12).reshape(3, 4)
    try:
        minigrad.set_printoptions(**options)
        torch.set_printoptions(**options)
        assert repr(minigrad.tensor(data, dtype=minigrad.float32)) == repr(torch.tensor(data, dtype=torch.float32))
    finally:
        minigrad.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_save_and_load_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    minigrad.save(model.state_dict(), tmp_path / "model.pt")
    other = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    other.load_state_dict(minigrad.load(tmp_path / "model.pt"))
    x = minigrad.randn(4, 3)
    assert minigrad.equal(model(x), other(x))
    buf = io.BytesIO()
    minigrad.save({"t": minigrad.arange(3)}, buf)
    buf.seek(0)
    assert minigrad.load(buf)["t"].tolist() == [0, 1, 2]
    assert pickle.loads(pickle.dumps(minigrad.ones(2))).tolist() == [1.0, 1.0]


def test_multinomial_samples_by_weight():
    minigrad.manual_seed(0)
    probs = minigrad.tensor([[0.1, 0.0, 0.9], [1.0, 1.0, 2.0]])
    draws = minigrad.multinomial(probs, 4000, replacement=True)
    assert draws.shape == (2, 4000) and draws.dtype == minigrad.int64
    assert not (draws[0] == 1).any()
    np.testing.assert_allclose(np.bincount(draws[1].numpy(), minlength=3) / 4000, [0.25, 0.25, 0.5], atol=0.03)
    once = probs[1].multinomial(3)  # without replacement: each category at most once
    assert sorted(once.tolist()) == [0, 1, 2] and 1 not in probs[0].multinomial(2).tolist()
    with pytest.raises(RuntimeError, match="^cannot sample n_sample > prob_dist.size\\(-1\\) samples without"):
        minigrad.multinomial(probs, 4)


def test_in_place_random_fills():
    minigrad.manual_seed(0)
    w = minigrad.empty(1000)
    assert w.uniform_(-2, 2) is w and -2 <= w.min().item() and w.max().item() <= 2 and w._version == 1
    w.normal_(1.0, 0.5)
    assert abs(w.mean().item() - 1.0) < 0.1 and abs(w.std().item() - 0.5) < 0.1
    leaf = minigrad.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.normal_()
    with minigrad.no_grad():
        leaf.normal_()


# --- a PyTorch program that uses the names of issue 12, run on both ----------------------------------------------
PROGRAM = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"
rng = np.random.default_rng(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"inp": nn.Linear(4, 8), "out": nn.Linear(8, 1)})
        self.norm = nn.LayerNorm(8)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.drop(self.act(self.norm(self.blocks["inp"](x))))
        return self.blocks["out"](h).squeeze(-1)


model = Net().to(device)
with torch.no_grad():
    for name, p in model.named_parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=torch.float32))
model.eval()  # dropout off: the same numbers on both
x = torch.tensor(rng.standard_normal((16, 4)), dtype=torch.float32)
y = (x[:, 0] * x[:, 1] > 0).float()
loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(2.0))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for step in range(5):
    opt.zero_grad()
    logits = model(x)
    loss = loss_fn(logits, y)
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
probs = torch.sigmoid(model(x)).detach()
top = probs.topk(3)
print(top.indices.tolist(), torch.round(top.values, decimals=3))
print(torch.where(probs > 0.5, 1, 0).sum().item(), probs.argsort(descending=True)[:4].tolist())
print(F.one_hot(y.long(), 2)[:3])
print(torch.cumprod(torch.tensor([1.0, 2.0, 0.0, 4.0]), 0), torch.prod(torch.tensor([[1, 2], [3, 4]]), 1))
z = torch.tensor([[3.0, 0.0], [1.0, 2.0]], requires_grad=True)
z.prod().backward()
print(z.grad)
print(torch.einsum("ij,jk->ik", x[:2, :2], x[:2, :2].T).shape, torch.kron(torch.eye(2), torch.ones(1, 2)))
print(torch.finfo(torch.float32).eps, torch.iinfo(torch.int64).max)
print(torch.chunk(torch.arange(7), 3), torch.tril(torch.ones(3, 3)).sum())
'''


def _run(module_name: str) -> str:
    import sys

    source = PROGRAM
    saved = {k: sys.modules.get(k) for k in ("torch", "torch.nn", "torch.nn.functional")}
    buf = io.StringIO()
    try:
        if module_name == "minigrad":
            sys.modules["torch"], sys.modules["torch.nn"] = minigrad, minigrad.nn
            sys.modules["torch.nn.functional"] = minigrad.nn.functional
        with contextlib.redirect_stdout(buf):
            exec(compile(source, "<program>", "exec"), {"__name__": "__program__"})
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return buf.getvalue()


def test_pytorch_program_runs_unchanged_and_prints_what_pytorch_prints():
    out = _run("minigrad")
    assert "step 4: loss" in out and "tensor([[0., 6.],\n        [0., 0.]])" in out  # d prod / d z at the zero
    pytest.importorskip("torch")  # (imports the real torch: _run("torch") then finds it in sys.modules)
    assert out == _run("torch")
