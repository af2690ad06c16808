"""grading-skip: the cells grading need not run (minigrad/course/_skip.py), and the book's tags."""
import json
from pathlib import Path

from minigrad.course import _skip

ROOT = Path(__file__).resolve().parents[1]


def _code(src, tags=()):
    return {"cell_type": "code", "source": src, "metadata": {"tags": list(tags)}}


SKIP = [_skip.TAG]


def test_a_plot_that_binds_nothing_later_cells_need_is_skipped_by_its_text():
    cells = [_code("import numpy as np\nx = np.linspace(0, 1, 5)"),
             _code("fig, ax = plt.subplots()\nax.plot(x, x ** 2)", SKIP),
             _code("fig, ax = plt.subplots()\nax.plot(x, x)")]
    skip, refused = _skip.skippable(cells)
    assert skip == {_skip.digest(cells[1]["source"])} and not refused


def test_a_tagged_cell_runs_when_it_could_change_what_other_cells_see():
    cases = {
        "y = x * 2\nplt.plot(y)": "a later cell reads y",
        "plt.plot(np.random.randn(3))": "random numbers",
        "x.sum().backward()\nplt.plot(x.grad)": ".backward",
        "x[0] = 1.0": "assigns into an attribute or an item",
        "plt.rcParams['figure.dpi'] = 50": "assigns into an attribute or an item",
        "global z\nz = 1": "global",
    }
    for src, why in cases.items():
        cells = [_code("x = 1"), _code(src, SKIP), _code("print(y)")]
        skip, refused = _skip.skippable(cells)
        assert not skip and why in refused[1], (src, refused)
    # an exercise's own cell is never skipped, whatever its tags
    ex = _code("plt.plot([1])", SKIP + ["solution"])
    assert _skip.skippable([ex]) == (set(), {0: "it is an exercise's cell"})


def test_every_grading_skip_tag_of_the_book_is_honoured():
    """A tag that the rules refuse would only mislead: the book has none (edit a tagged cell so that a
    later cell needs it, and this fails)."""
    tagged = 0
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        skip, refused = _skip.skippable(cells)
        assert not refused, (path.name, {cells[i].get("id"): why for i, why in refused.items()})
        tagged += len(skip)
    assert tagged >= 20


def test_the_runner_skips_only_the_instructors_own_text():
    from minigrad.course import _runner

    runner = _runner.Runner.__new__(_runner.Runner)
    runner.skip = {_skip.digest("plt.plot([1])")}
    runner.phases = {}
    runner.cells = [{"source": "plt.plot([1])"}, {"source": "plt.plot([1])  # edited"}, {"source": ["plt.", "plot([1])"]}]
    assert [runner.skipped(i) for i in range(3)] == [True, False, True]
    assert runner.phases["skipped"] == 2
