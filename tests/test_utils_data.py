"""torch.utils.data on minigrad: Dataset, TensorDataset, DataLoader (batch_size, shuffle with a seeded
generator, drop_last), default_collate; PyTorch as the oracle where the result does not depend on the RNG."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from _engines import LIBS
from minigrad.utils import data as mdata



def _data(T):
    if T is minigrad:
        return mdata
    import torch.utils.data

    return torch.utils.data


def _describe(batch):
    """A batch as plain Python values, with each tensor's dtype: comparable across the libraries."""
    if hasattr(batch, "tolist") and hasattr(batch, "dtype") and not isinstance(batch, np.ndarray):
        return ("tensor", str(batch.dtype).replace("torch.", "").replace("minigrad.", ""), batch.tolist())
    if isinstance(batch, dict):
        return {k: _describe(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [_describe(b) for b in batch])
    return batch


def scenario(T):
    D = _data(T)
    ds = D.TensorDataset(T.arange(10.0), T.arange(10))
    out = {"len": len(ds), "item": _describe(ds[3])}
    out["batches"] = [_describe(b) for b in D.DataLoader(ds, batch_size=4)]
    out["len_loader"] = (len(D.DataLoader(ds, batch_size=4)), len(D.DataLoader(ds, batch_size=4, drop_last=True)))
    out["dropped"] = [_describe(b) for b in D.DataLoader(ds, batch_size=4, drop_last=True)]
    out["unbatched"] = _describe(next(iter(D.DataLoader(ds, batch_size=None))))
    out["collate"] = _describe(D.default_collate([(T.ones(2), 1, 2.5, "a"), (T.zeros(2), 2, 3.5, "b")]))
    out["collate_dict"] = _describe(D.default_collate([{"x": np.ones(2), "y": 1}, {"x": np.zeros(2), "y": 0}]))
    return out


def test_minigrad_data_behaves():
    out = scenario(minigrad)
    assert out["len"] == 10
    assert out["len_loader"] == (3, 2)
    assert [b[1][0][2] for b in out["batches"]] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]
    assert len(out["dropped"]) == 2
    assert out["collate"][0] == "list" and out["collate"][1][1] == ("tensor", "int64", [1, 2])
    assert out["collate"][1][2] == ("tensor", "float64", [2.5, 3.5])
    assert out["collate"][1][3] == ("tuple", ["a", "b"])


def test_data_matches_pytorch():
    torch = pytest.importorskip("torch")
    assert scenario(minigrad) == scenario(torch)


@LIBS
def test_shuffle_with_a_seeded_generator_is_reproducible_and_new_each_epoch(T):
    D = _data(T)
    ds = D.TensorDataset(T.arange(20))

    def epochs(seed):
        loader = D.DataLoader(ds, batch_size=6, shuffle=True, generator=T.Generator().manual_seed(seed))
        return [[int(v) for b in loader for v in b[0].tolist()] for _ in range(2)]

    a, b = epochs(7), epochs(7)
    assert a == b  # the same seed, the same order
    assert a[0] != a[1]  # each epoch a new permutation
    assert sorted(a[0]) == list(range(20)) and sorted(a[1]) == list(range(20))
    assert epochs(8) != a
    assert a[0] != list(range(20))


def test_shuffle_without_generator_follows_manual_seed():
    ds = mdata.TensorDataset(minigrad.arange(12))
    orders = []
    for _ in range(2):
        minigrad.manual_seed(5)
        orders.append([int(v) for b in mdata.DataLoader(ds, batch_size=5, shuffle=True) for v in b[0].tolist()])
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(12))


@LIBS
def test_errors_as_pytorch(T):
    D = _data(T)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        D.TensorDataset(T.ones(3), T.ones(4))
    ds = D.TensorDataset(T.ones(4))
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        D.DataLoader(ds, batch_size=2, shuffle=True, sampler=[0, 1])
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        D.DataLoader(ds, batch_size=0)


@LIBS
def test_a_dataset_subclass_and_random_split(T):
    D = _data(T)

    class Squares(D.Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            return T.tensor([float(i)]), i * i

    batches = list(D.DataLoader(Squares(), batch_size=3))
    assert [b[1].tolist() for b in batches] == [[0, 1, 4], [9, 16, 25], [36]]
    assert tuple(batches[0][0].shape) == (3, 1)
    parts = D.random_split(Squares(), [5, 2], generator=T.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 2]
    assert sorted(p[i][1] for p in parts for i in range(len(p))) == [i * i for i in range(7)]


def test_a_training_loop_over_a_loader():
    minigrad.manual_seed(0)
    x = minigrad.randn(64, 3)
    y = x @ minigrad.tensor([[1.0], [-2.0], [0.5]])
    model = minigrad.nn.Linear(3, 1)
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1)
    loader = mdata.DataLoader(mdata.TensorDataset(x, y), batch_size=16, shuffle=True,
                              generator=minigrad.Generator().manual_seed(1))
    for _ in range(30):
        for xb, yb in loader:
            opt.zero_grad()
            minigrad.nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
    np.testing.assert_allclose(model.weight.detach().numpy().ravel(), [1.0, -2.0, 0.5], atol=1e-3)
