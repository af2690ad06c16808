"""The ``minigrad-course`` command: release the student edition, grade submissions."""
from __future__ import annotations

import argparse
import os
import sys

DESCRIPTION = """\
Instructor tools for the course "Inside autograd.Function".

  minigrad-course release --out DIR
      Write the student edition into DIR: DIR/notebooks/*.ipynb (each solution replaced by
      `# YOUR CODE HERE` + `raise NotImplementedError()`, hidden tests and solution cells removed,
      outputs cleared) and DIR/site/ (the student website, built with jupyter-book, with no
      solutions at all; skip it with --no-site).

  minigrad-course grade SUBMISSIONS --out DIR [--timeout SECONDS] [--memory MB] [--jobs N]
      SUBMISSIONS holds one folder per student with that student's notebooks under their
      released names (e.g. SUBMISSIONS/alice/03_relu.ipynb). Each notebook is graded in its own
      bubblewrap sandbox (install the package `bubblewrap`): a fresh kernel runs it with a time
      limit and a memory limit, and a fresh checker process computes each exercise's verdict;
      the hidden tests and checks enter the sandbox through a pipe. DIR receives grades.csv and
      grades.json (student, notebook, exercise, points, max_points, flagged, feedback),
      totals.csv and scores_by_exercise.png. Submissions are never modified.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minigrad-course", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="{release,grade}")
    r = sub.add_parser("release", help="write the student edition (notebooks + website)",
                       description="Write the student edition of the book into --out DIR: "
                                   "DIR/notebooks/*.ipynb and, unless --no-site, the website in DIR/site/.")
    r.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    r.add_argument("--source", metavar="ROOT", help="the book's root folder (default: found from the current "
                   "folder; the one with _toc.yml and book/)")
    r.add_argument("--no-site", action="store_true", help="only the notebooks: skip the jupyter-book build")
    g = sub.add_parser("grade", help="grade a folder of submissions into a gradebook",
                       description="Grade SUBMISSIONS (one folder per student, notebooks under their released "
                                   "names) into --out DIR: grades.csv, grades.json, totals.csv, "
                                   "scores_by_exercise.png.")
    g.add_argument("submissions", metavar="SUBMISSIONS", help="folder with one sub-folder per student")
    g.add_argument("--out", required=True, metavar="DIR", help="where the gradebook is written")
    g.add_argument("--timeout", type=float, default=120, metavar="SECONDS",
                   help="time limit per notebook, in seconds (default: 120)")
    g.add_argument("--memory", type=int, default=2048, metavar="MB",
                   help="memory (address-space) limit per notebook kernel, in MB (default: 2048)")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="notebooks graded in parallel (default: number of CPUs)")
    g.add_argument("--source", metavar="ROOT", help="the instructor's book root (default: found from the current "
                   "folder)")
    g.add_argument("--no-sandbox", action="store_true",
                   help="grade without bubblewrap (weaker in-process protections; recorded in grades.json): "
                        "only for submissions you trust")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "release":
            from .release import release

            release(args.out, args.source, site=not args.no_site)
        else:
            from .grade import grade

            from .grade import GradingInterrupted

            try:
                grade(args.submissions, args.out, source=args.source, timeout=args.timeout,
                      memory_mb=args.memory, jobs=args.jobs, sandbox=not args.no_sandbox)
            except GradingInterrupted as e:
                print(f"minigrad-course: {e}", file=sys.stderr)
                return 128 + e.signum
    except ImportError as e:
        print(f"minigrad-course: error: {e}. The course tools need the notebook stack: "
              "pip install nbformat nbclient ipykernel pyyaml matplotlib (and jupyter-book for the website).",
              file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError, RuntimeError) as e:
        print(f"minigrad-course: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
