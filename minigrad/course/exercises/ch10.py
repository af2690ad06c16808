"""Checks for chapter 10 (capstone): a fused Linear + ReLU layer that trains, weight decay by hand,
and the Function whose wrong backward makes training diverge."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.course import CheckFailed, exercise
from minigrad.course._i18n import _
from minigrad.course.diagnose import diagnose_function

_SUSPECTS = ("SuspectLinear", "SuspectReLU", "SuspectCrossEntropy")
_CULPRIT = "SuspectCrossEntropy"


def _digits(n_train: int = 1000, n_test: int = 500):
    """A fixed subset of scikit-learn's digits (float64, in [0, 1]): fast, and the same every time."""
    from sklearn.datasets import load_digits

    d = load_digits()
    order = np.random.default_rng(0).permutation(len(d.target))
    X, y = d.data[order] / 16.0, d.target[order]
    return (X[:n_train], y[:n_train]), (X[n_train:n_train + n_test], y[n_train:n_train + n_test])


def _train(hidden, epochs: int = 4, lr: float = 0.2, momentum: float = 0.9):
    """Train hidden(x, W1, b1) -> Linear(32 -> 10) -> cross-entropy with SGD and momentum; the test
    accuracy and the losses.

    Same initial weights and batches for every call, so two correct hidden layers give the same numbers.
    """
    (X, y), (Xt, yt) = _digits()
    rng = np.random.default_rng(1)
    shapes = [(32, 64), (32,), (10, 32), (10,)]
    params = [minigrad.tensor(rng.uniform(-0.125, 0.125, s), dtype=minigrad.float64, requires_grad=True)
              for s in shapes]
    W1, b1, W2, b2 = params
    velocity = [minigrad.zeros_like(p) for p in params]
    X, y, Xt, yt = (minigrad.tensor(a) for a in (X, y, Xt, yt))
    losses = []
    for _epoch in range(epochs):
        for first in range(0, len(y), 50):
            xb, yb = X[first:first + 50], y[first:first + 50]
            out = hidden(xb, W1, b1)
            loss = minigrad.nn.functional.cross_entropy(out @ W2.T + b2, yb)
            for p in params:
                p.grad = None
            loss.backward()
            if any(p.grad is None for p in params[:2]):
                raise CheckFailed(_("after backward, the weight or the bias of your layer has no gradient: "
                                    "does backward return three gradients, in the order (x, weight, bias)?"))
            with minigrad.no_grad():
                for p, v in zip(params, velocity):
                    v.mul_(momentum).add_(p.grad)
                    p -= lr * v
            losses.append(loss.item())
    with minigrad.no_grad():
        acc = (((hidden(Xt, W1, b1) @ W2.T + b2).argmax(1)) == yt).float().mean().item()
    return acc, np.array(losses)


@exercise("ch10-ex1", points=3, title="A fused Linear + ReLU layer", minutes=30,
          objective="fuse two layers into one Function and show that it trains exactly like the pair")
def _check_linear_relu(LinearReLUFunction):
    def reference(x, weight, bias):
        return minigrad.relu(x @ weight.T + bias)

    result = diagnose_function(LinearReLUFunction, reference, inputs=[(5, 4), (3, 4), (3,)],
                               input_names=["x", "weight", "bias"])
    if not result.passed:
        return result
    # needs_input_grad: the first layer's input is data
    w = minigrad.tensor([[0.5, -1.0], [1.5, 0.25]], dtype=minigrad.float64, requires_grad=True)
    b = minigrad.tensor([0.1, -0.2], dtype=minigrad.float64, requires_grad=True)
    out = LinearReLUFunction.apply(minigrad.tensor([[1.0, 2.0]], dtype=minigrad.float64), w, b)
    grads = LinearReLUFunction.backward(out.grad_fn, minigrad.ones_like(out))
    if grads[0] is not None:
        raise CheckFailed(_("values and gradients are right, but backward computed the gradient of x when "
                            "x does not require grad (the first layer's input is data): test "
                            "ctx.needs_input_grad[0] before the product grad @ weight."))
    mine, mine_losses = _train(LinearReLUFunction.apply)
    ref, ref_losses = _train(lambda x, w_, b_: minigrad.relu(x @ w_.T + b_))
    if not np.allclose(mine_losses, ref_losses, rtol=1e-6, atol=1e-9):
        step = int(np.argmax(~np.isclose(mine_losses, ref_losses, rtol=1e-6, atol=1e-9)))
        raise CheckFailed(_("gradcheck-style tests pass, but training with your layer differs from the built-in "
                            "layers from step {step}: loss {mine} instead of {ref}.")
                          .format(step=step, mine=f"{mine_losses[step]:.6f}", ref=f"{ref_losses[step]:.6f}"))
    return (result.message + "\n  - " + _("it skips the gradient of x when x is data (needs_input_grad)")
            + "\n  - " + _("trained on the digits (4 epochs, 1,000 images) it reaches {mine} test accuracy, "
                           "the same as the built-in Linear + ReLU ({ref}), step for step")
            .format(mine=f"{mine:.1%}", ref=f"{ref:.1%}"))


def _one_step(sgd_step, p0: np.ndarray, g: np.ndarray, lr: float, wd: float):
    p = minigrad.tensor(p0, dtype=minigrad.float64, requires_grad=True)
    p.grad = minigrad.tensor(g, dtype=minigrad.float64)
    sgd_step([p], lr, wd)
    if p.grad_fn is not None:
        raise CheckFailed(_("after sgd_step the parameter has a grad_fn: the update was recorded in the "
                            "graph. Do it inside `with torch.no_grad():`."))
    return p.detach().numpy()


@exercise("ch10-ex2", points=2, title="Weight decay by hand", minutes=15,
          objective="write an optimizer step by hand: in place, outside the graph, with weight decay")
def _check_sgd_step(sgd_step):
    if not callable(sgd_step):
        raise CheckFailed(_("sgd_step should be a function sgd_step(parameters, lr, weight_decay)."))
    p0 = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]])
    g = np.array([[0.2, 0.1, -0.4], [-0.3, 0.5, 0.05]])
    lr, wd = 0.1, 0.05
    try:
        got = _one_step(sgd_step, p0, g, lr, wd)
    except RuntimeError as e:
        if "in-place" in str(e) or "inplace" in str(e) or "leaf" in str(e):
            raise CheckFailed(_("updating the parameter raised: {error} -- an in-place "
                                "update of a leaf that requires grad must run inside "
                                "`with torch.no_grad():`.").format(error=str(e).splitlines()[0])) from None
        raise
    want = p0 - lr * (g + wd * p0)
    if np.allclose(got, want, atol=1e-12):
        # the reference: minigrad's own SGD, three steps on a real loss
        ref = minigrad.tensor(p0, dtype=minigrad.float64, requires_grad=True)
        mine = minigrad.tensor(p0, dtype=minigrad.float64, requires_grad=True)
        opt = minigrad.optim.SGD([ref], lr=lr, weight_decay=wd)
        for _step in range(3):
            for p in (ref, mine):
                p.grad = None
                ((p - 1.0) ** 2).sum().backward()
            opt.step()
            sgd_step([mine], lr, wd)
        if not np.allclose(mine.detach().numpy(), ref.detach().numpy(), atol=1e-12):
            raise CheckFailed(_("one step is right, but after three steps on a real loss your parameters differ "
                                "from SGD(weight_decay=...)'s: does sgd_step change p.grad or keep state?"))
        return _("right: p - lr * (grad + weight_decay * p), in place and outside the graph; three steps "
                 "match torch.optim.SGD(weight_decay=...) exactly.")
    diagnoses = [
        (p0, "the parameters did not change: assign in place (p -= ..., or p.sub_(...)); `p = p - ...` only "
             "rebinds the loop variable."),
        (p0 + lr * (g + wd * p0), "the step goes uphill: subtract lr * (grad + weight_decay * p)."),
        (p0 - lr * g, "the parameters move by -lr * grad only: the weight decay term weight_decay * p is missing."),
        (p0 - lr * g - wd * p0, _("the weight decay term is not multiplied by the learning rate: "
                                  "p -= lr * (grad + weight_decay * p).")),
        (p0 - lr * (g + 2 * wd * p0), _("the weight decay term is twice too large: the gradient of "
                                        "(weight_decay / 2) * p**2 is weight_decay * p.")),
        (p0 - lr * (g - wd * p0), _("the weight decay term has the wrong sign: it must pull p toward zero, "
                                    "p -= lr * (grad + weight_decay * p).")),
        (p0 * (1 - wd) - lr * g, _("the decay is not scaled by the learning rate: "
                                   "p -= lr * (grad + weight_decay * p).")),
    ]
    for value, why in diagnoses:
        if np.allclose(got, value, atol=1e-12):
            raise CheckFailed(why)
    i = np.unravel_index(int(np.argmax(np.abs(got - want))), want.shape)
    raise CheckFailed(_("after one step from p = {p} with grad = {g} (lr = {lr}, weight_decay = {wd}) "
                        "the parameter should be {want}, got {got}.")
                      .format(p=f"{p0[i]:g}", g=f"{g[i]:g}", lr=lr, wd=wd, want=f"{want[i]:.6g}", got=f"{got[i]:.6g}"))


@exercise("ch10-ex3", points=3, title="Which Function makes training diverge?", minutes=20,
          objective="find a wrong backward with gradcheck instead of guessing, and fix it")
def _check_culprit(culprit, fixed=None):
    name = getattr(culprit, "__name__", culprit)
    if not isinstance(name, str) or name not in _SUSPECTS:
        raise CheckFailed(_("culprit should be one of the names {names} (a string), got {got}.")
                          .format(names=", ".join(repr(s) for s in _SUSPECTS), got=repr(culprit)))
    if name != _CULPRIT:
        raise CheckFailed(_("{name} is correct: its backward passes gradcheck. Run gradcheck on each suspect "
                            "(section 3 shows how for a layer, an activation and a loss).").format(name=name))
    if fixed is None:
        raise CheckFailed(_("the culprit is right; now write FixedFunction and pass it: "
                            "check(\"ch10-ex3\", culprit, fixed=FixedFunction)."))
    labels = minigrad.tensor([0, 3, 1, 1, 2, 4])
    z = minigrad.zeros(6, 5, dtype=minigrad.float64, requires_grad=True)
    out = fixed.apply(z, labels)
    returned = fixed.backward(out.grad_fn, minigrad.ones_like(out))
    if not isinstance(returned, tuple) or len(returned) != 2:
        raise CheckFailed(_("The culprit is right, but FixedFunction's backward must return two values, one per "
                            "forward argument: the gradient of the logits and None for the labels (wrong number "
                            "of returned gradients)."))
    # (the loss is a scalar: compare it as a one-element tensor)
    result = diagnose_function(lambda logits: fixed.apply(logits, labels).reshape(1),
                               lambda logits: minigrad.nn.functional.cross_entropy(logits, labels).reshape(1),
                               inputs=[(6, 5)], input_names=["logits"])
    if not result.passed:
        return _fix_not_right(result)
    _check_twice_differentiable(fixed, labels)
    verified = result.message.split("\n", 1)[1]
    return (_("right: SuspectCrossEntropy's backward forgot the mean's 1/N, so its gradients were N times too "
              "large (64 for a batch of 64) and every step overshot. FixedFunction is correct, checked on 2 "
              "batches of 6 random rows of scores, and gradgradcheck passes (it saves only its inputs):") + "\n"
            + verified)


def _check_twice_differentiable(fixed, labels) -> None:
    """gradgradcheck on the fix: a loss must not save an intermediate such as log_p (chapter 7)."""
    rng = np.random.default_rng(3)
    z = minigrad.tensor(rng.normal(size=(6, 5)), dtype=minigrad.float64, requires_grad=True)
    why = _("A loss is what second derivatives are taken of (chapter 7): save only the inputs, "
            "ctx.save_for_backward(logits, target), and recompute the softmax in backward with "
            "differentiable operations, without changing a tensor in place (subtract a one-hot "
            "matrix, e.g. torch.eye(C)[target]).")
    try:
        ok = minigrad.autograd.gradgradcheck(fixed.apply, (z, labels), raise_exception=False)
    except Exception as err:  # e.g. an in-place change of a recorded tensor under create_graph
        first = str(err).splitlines()[0] if str(err) else ""
        raise CheckFailed(_("The culprit is right and FixedFunction's gradient is correct, but differentiating "
                            "its backward raised {error_type}: {error}").format(error_type=type(err).__name__,
                                                                               error=first) + "\n" + why) from None
    if not ok:
        raise CheckFailed(_("The culprit is right and FixedFunction's gradient is correct, but gradgradcheck fails: "
                            "FixedFunction saves an intermediate (log_p), computed in forward where nothing is "
                            "recorded, so the gradient of its gradient cannot reach the scores.") + "\n" + why)


def _fix_not_right(result):
    """The culprit is right, the fix is not: say so first."""
    from minigrad.course import CheckResult

    return CheckResult(False, _("The culprit is right, but FixedFunction is not yet correct.") + "\n" + result.message,
                       details=result.details)
