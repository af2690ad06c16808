"""Matrix ops of issue 12 (addmm, mv, bmm, baddbmm, einsum, tensordot, inner, outer, kron, trace, diag /
diagonal / diag_embed, tril / triu, det, inverse, solve, matrix_power, cross, linalg): gradcheck,
gradgradcheck, PyTorch as an oracle, then singular matrices and errors against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from optable import Row, check_error_matches_torch, check_gradcheck, check_gradgradcheck, check_oracle, params

import minigrad


def well_conditioned(T, m):
    """m + 3 I: keeps random square matrices far from singular (det, inverse, solve)."""
    n = m.shape[-1]
    return m + T.tensor(np.eye(n) * 3.0, dtype=m.dtype)


ROWS = [
    Row("addmm", lambda T, c, a, b: T.addmm(c, a, b), [("n", (2, 4)), ("n", (2, 3)), ("n", (3, 4))]),
    Row("addmm-bcast-alpha-beta", lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0),
        [("n", (4,)), ("n", (2, 3)), ("n", (3, 4))]),
    Row("addmm-method", lambda T, c, a, b: c.addmm(a, b), [("n", (2, 4)), ("n", (2, 3)), ("n", (3, 4))]),
    Row("mv", lambda T, m, v: T.mv(m, v), [("n", (3, 4)), ("n", (4,))]),
    Row("addmv", lambda T, c, m, v: T.addmv(c, m, v, alpha=0.5), [("n", (3,)), ("n", (3, 4)), ("n", (4,))]),
    Row("bmm", lambda T, a, b: T.bmm(a, b), [("n", (2, 3, 4)), ("n", (2, 4, 2))]),
    Row("bmm-method", lambda T, a, b: a.bmm(b), [("n", (3, 1, 2)), ("n", (3, 2, 2))]),
    Row("baddbmm", lambda T, c, a, b: T.baddbmm(c, a, b), [("n", (2, 3, 2)), ("n", (2, 3, 4)), ("n", (2, 4, 2))]),
    Row("einsum-matmul", lambda T, a, b: T.einsum("ij,jk->ik", a, b), [("n", (2, 3)), ("n", (3, 4))]),
    Row("einsum-implicit", lambda T, a, b: T.einsum("ij,kj", a, b), [("n", (2, 3)), ("n", (4, 3))]),
    Row("einsum-trace", lambda T, a: T.einsum("ii", a), [("n", (3, 3))]),
    Row("einsum-diagonal", lambda T, a: T.einsum("ii->i", a), [("n", (3, 3))]),
    Row("einsum-sum-out", lambda T, a: T.einsum("ijk->j", a), [("n", (2, 3, 4))]),
    Row("einsum-outer-batch", lambda T, a, b: T.einsum("bi,bj->bij", a, b), [("n", (2, 3)), ("n", (2, 4))]),
    Row("einsum-ellipsis", lambda T, a, b: T.einsum("...ij,...jk->...ik", a, b), [("n", (5, 2, 3)), ("n", (3, 2))]),
    Row("einsum-three", lambda T, a, b, c: T.einsum("ij,jk,kl->il", a, b, c), [("n", (2, 3)), ("n", (3, 4)), ("n", (4, 2))]),
    Row("einsum-list", lambda T, a, b: T.einsum("i,i->", [a, b]), [("n", (4,)), ("n", (4,))]),
    Row("einsum-repeated-out", lambda T, a, b: T.einsum("iij,jk->ik", a, b), [("n", (3, 3, 2)), ("n", (2, 4))]),
    Row("tensordot-int", lambda T, a, b: T.tensordot(a, b, dims=1), [("n", (2, 3)), ("n", (3, 4))]),
    Row("tensordot-lists", lambda T, a, b: T.tensordot(a, b, dims=([0, 2], [2, 0])), [("n", (2, 3, 4)), ("n", (4, 5, 2))]),
    Row("inner", lambda T, a, b: T.inner(a, b), [("n", (2, 3)), ("n", (4, 3))]),
    Row("outer", lambda T, a, b: T.outer(a, b), [("n", (3,)), ("n", (4,))]),
    Row("ger", lambda T, a, b: a.ger(b), [("n", (2,)), ("n", (3,))]),
    Row("kron", lambda T, a, b: T.kron(a, b), [("n", (2, 3)), ("n", (3, 2))]),
    Row("kron-mixed-ndim", lambda T, a, b: a.kron(b), [("n", (3,)), ("n", (2, 2))]),
    Row("trace", lambda T, a: T.trace(a), [("n", (3, 4))]),
    Row("diagonal", lambda T, a: a.diagonal(), [("n", (3, 4))]),
    Row("diagonal-offset-dims", lambda T, a: T.diagonal(a, 1, 0, 2), [("n", (3, 2, 4))]),
    Row("diagonal-negative-offset", lambda T, a: a.diagonal(-1), [("n", (4, 3))]),
    Row("diag-of-vector", lambda T, v: T.diag(v, 1), [("n", (3,))]),
    Row("diag-of-matrix", lambda T, a: a.diag(-1), [("n", (4, 3))]),
    Row("diag_embed", lambda T, v: T.diag_embed(v), [("n", (2, 3))]),
    Row("tril", lambda T, a: a.tril(), [("n", (3, 4))]),
    Row("triu-offset", lambda T, a: T.triu(a, 1), [("n", (2, 3, 4))]),
    Row("det", lambda T, a: T.det(well_conditioned(T, a)), [("n", (3, 3))]),
    Row("det-batched", lambda T, a: well_conditioned(T, a).det(), [("n", (2, 3, 3))]),
    Row("inverse", lambda T, a: T.inverse(well_conditioned(T, a)), [("n", (3, 3))]),
    Row("linalg.inv", lambda T, a: T.linalg.inv(well_conditioned(T, a)), [("n", (2, 2, 2))]),
    Row("linalg.det", lambda T, a: T.linalg.det(well_conditioned(T, a)), [("n", (3, 3))]),
    Row("linalg.solve", lambda T, a, b: T.linalg.solve(well_conditioned(T, a), b), [("n", (3, 3)), ("n", (3, 2))]),
    Row("linalg.solve-vector", lambda T, a, b: T.linalg.solve(well_conditioned(T, a), b), [("n", (3, 3)), ("n", (3,))]),
    Row("linalg.norm", lambda T, a: T.linalg.norm(a), [("n", (3, 4))]),
    Row("linalg.vector_norm-ord", lambda T, a: T.linalg.vector_norm(a, 3, dim=1), [("a", (3, 4))]),
    Row("matrix_power", lambda T, a: T.matrix_power(a, 3), [("n", (3, 3))]),
    Row("matrix_power-negative", lambda T, a: well_conditioned(T, a).matrix_power(-2), [("n", (3, 3))]),
    Row("cross", lambda T, a, b: T.cross(a, b, dim=1), [("n", (2, 3)), ("n", (2, 3))]),
    Row("linalg.cross-bcast", lambda T, a, b: T.linalg.cross(a, b), [("n", (4, 3)), ("n", (1, 3))]),
]


@pytest.mark.parametrize("row", params(ROWS, "grad"))
def test_gradcheck(row):
    check_gradcheck(row)


@pytest.mark.parametrize("row", params(ROWS, "gradgrad"))
def test_gradgradcheck(row):
    check_gradgradcheck(row)


@pytest.mark.parametrize("row", params(ROWS, "oracle"))
def test_matches_torch(row):
    check_oracle(row)


def test_det_gradient_of_a_singular_matrix_is_the_cofactor_matrix():
    # rank 2: det 0, but its gradient (the cofactor matrix) is not 0. Finite differences are exact here (det is
    # linear in each entry), so gradcheck confirms it. (PyTorch 2.13 returns a zero gradient for this matrix.)
    a = minigrad.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=minigrad.float64,
                        requires_grad=True)
    assert minigrad.autograd.gradcheck(minigrad.det, (a,))
    minigrad.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-12)


def test_diagonal_is_a_writable_view():
    x = minigrad.zeros(3, 3)
    x.diagonal().fill_(1.0)
    assert x.tolist() == np.eye(3).tolist()
    y = minigrad.zeros(3, 3, requires_grad=True) * 1
    y.diagonal(1).add_(2.0)  # recorded on y through the view
    y.sum().backward()


ERRORS = [
    "torch.bmm(torch.ones(2, 3), torch.ones(2, 3, 4))", "torch.bmm(torch.ones(2, 3, 5), torch.ones(2, 3, 4))",
    "torch.bmm(torch.ones(2, 3, 5), torch.ones(3, 5, 4))", "torch.addmm(torch.ones(2, 2), torch.ones(2, 3), torch.ones(4, 2))",
    "torch.mv(torch.ones(2, 3), torch.ones(4))", "torch.inverse(torch.zeros(3, 3))", "torch.inverse(torch.ones(2, 3))",
    "torch.ones(3, 3).matrix_power(-1)", "torch.det(torch.ones(2, 3))", "torch.det(torch.ones(2, 2, dtype=torch.int64))",
    "torch.einsum('ij,jk->ik', torch.ones(2, 3), torch.ones(4, 2))", "torch.trace(torch.ones(3))",
    "torch.diag(torch.ones(2, 2, 2))", "torch.tril(torch.ones(3))", "torch.outer(torch.ones(2), torch.ones(3, 1))",
    "torch.cross(torch.ones(3, 4), torch.ones(3, 4), dim=1)", "torch.matrix_power(torch.ones(2, 3), 2)",
    "torch.ones(2, 3).diagonal(0, 1, 1)", "torch.linalg.cross(torch.ones(4, 3), torch.ones(3))",
]


@pytest.mark.parametrize("source", ERRORS)
def test_errors_match_torch(source):
    check_error_matches_torch(source)
