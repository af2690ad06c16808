"""The ``minigrad-course`` command: release the student edition, grade submissions, list the exercises."""
from __future__ import annotations

import argparse
import os
import sys

DESCRIPTION = """\
Instructor tools for the course "Inside autograd.Function".

  minigrad-course release --out DIR [--chapters 3[,4...]] [--repository-url URL] [--no-site] [--language zh]
      Write the student edition into DIR: DIR/notebooks/*.ipynb (each solution replaced by
      `# YOUR CODE HERE` + `raise NotImplementedError()`, hidden tests and solution cells removed,
      outputs cleared, each notebook's identity in its metadata), DIR/assignment.json (chapters,
      exercise ids, points, release id) and DIR/site/ (the student website, with no solutions at
      all; its launch buttons open --repository-url, or there are none; skip it with --no-site).
      Without --chapters: the whole book.

  minigrad-course grade SUBMISSIONS --out DIR [--chapters 3 | --assignment FILE] [--roster CSV]
                        [--timeout SECONDS] [--memory MB] [--jobs N] [--no-sandbox]
      SUBMISSIONS holds one folder per student (or Canvas's flat download). Notebooks are found by
      the identity written at release, whatever they were renamed to. Each notebook is graded in
      its own bubblewrap sandbox (install the package `bubblewrap`): a fresh kernel runs it with a
      time limit and a memory limit, and a fresh checker process computes each exercise's verdict
      (with partial credit for exercises in parts); the hidden tests and checks enter the sandbox
      through a pipe. Only the assignment's exercises are graded, out of its points (--chapters,
      or --assignment DIR/assignment.json; neither: the whole book). DIR receives grades.csv and
      grades.json (student, notebook, exercise, points, max_points, parts, flagged, feedback),
      totals.csv, canvas.csv, moodle.csv, grading_log.txt and scores_by_exercise.png.
      Submissions are never modified. --shard i/n grades only shard i of n (by a hash of the student's
      id) into a partial gradebook; --shard auto takes i and n from a Slurm job array or a Kubernetes
      Indexed Job ({i} and {n} in --out become the shard's numbers). DIR also receives report.html.

  minigrad-course merge PART... --out DIR
      Check that the shards' gradebooks cover the class exactly once (same n, every shard, same
      assignment, grader version and class) and write the class's gradebook into DIR, as one grade
      run over the whole class would have.

  minigrad-course new-exercise ID --title TITLE --answer NAME [--points P] [--minutes M]
      Add an exercise of your own to the book repository: its check in course/checks/ID.py and
      its cells (task, solution, check, hidden tests) in its chapter's notebook, to fill in.

  minigrad-course catalogue [--write | --check]
      Print the exercise catalogue (id, chapter, title, points, minutes, objective, graded), or
      write it into book/instructor_guide.md, or check that the guide's copy is current.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minigrad-course", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="{release,grade,merge,new-exercise,catalogue}")
    r = sub.add_parser("release", help="write the student edition (notebooks + website + assignment.json)",
                       description="Write the student edition of the book (or of --chapters) into --out DIR: "
                                   "DIR/notebooks/*.ipynb, DIR/assignment.json and, unless --no-site, the "
                                   "website in DIR/site/.")
    r.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    r.add_argument("--chapters", metavar="N[,M...]", help="release only these chapters, e.g. 3 or 3,4 or 3-5 "
                   "(default: the whole book)")
    r.add_argument("--title", help="the assignment's name (default: the chapter's title); it is the column "
                   "name in the Canvas and Moodle files")
    r.add_argument("--repository-url", metavar="URL", help="the student repository (where you publish DIR/book/): "
                   "the site's launch and repository buttons point there. Without it the site has none.")
    r.add_argument("--repository-branch", default="main", metavar="BRANCH",
                   help="branch of --repository-url (default: main)")
    r.add_argument("--source", metavar="ROOT", help="the book's root folder (default: found from the current "
                   "folder; the one with _toc.yml and book/)")
    r.add_argument("--no-site", action="store_true", help="only the notebooks: skip the jupyter-book build")
    r.add_argument("--language", default="en", choices=["en", "zh"],
                   help="zh: the Chinese student edition (from the book's zh/; check() and the grader "
                   "then give their feedback in Chinese). Default: en")
    g = sub.add_parser("grade", help="grade a folder of submissions into a gradebook",
                       description="Grade SUBMISSIONS (one folder per student, or Canvas's flat download) into "
                                   "--out DIR: grades.csv, grades.json, totals.csv, canvas.csv, moodle.csv, "
                                   "grading_log.txt, scores_by_exercise.png.")
    g.add_argument("submissions", metavar="SUBMISSIONS", help="folder with one sub-folder per student")
    g.add_argument("--out", required=True, metavar="DIR", help="where the gradebook is written")
    which = g.add_mutually_exclusive_group()
    which.add_argument("--chapters", metavar="N[,M...]", help="grade only these chapters' exercises, out of their "
                       "points (default: the whole book)")
    which.add_argument("--assignment", metavar="FILE", help="grade the assignment that release wrote "
                       "(DIR/assignment.json): its exercises, out of its points")
    g.add_argument("--roster", metavar="CSV", help="map submission folders to LMS identities: a CSV with a 'folder' "
                   "column and Canvas (ID, SIS User ID, SIS Login ID, Section, Student) or Moodle (ID number, "
                   "Username, Email address) columns")
    g.add_argument("--lms-column", metavar="NAME", help="the assignment's column in canvas.csv and moodle.csv "
                   "(default: the assignment's title)")
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
    g.add_argument("--seed", type=int, metavar="N", help="the seed of the checks' random inputs (default: one derived "
                   "from the submissions; grades.json records it, so a run can be repeated)")
    g.add_argument("--shard", metavar="I/N", help="grade only shard I of N (1 <= I <= N; a student's shard is a hash "
                   "of the folder name) into a partial gradebook for `merge`; 'auto' or 'auto/N': I and N from "
                   "SLURM_ARRAY_TASK_ID (a Slurm job array) or JOB_COMPLETION_INDEX (a Kubernetes Indexed Job, "
                   "N from auto/N or MINIGRAD_COURSE_SHARDS); {i} and {n} in --out become the shard's numbers")
    m = sub.add_parser("merge", help="merge the shards' partial gradebooks into the class's gradebook",
                       description="Check that the gradebooks of `grade --shard` cover the class exactly once and "
                                   "write the class's gradebook, LMS files, log and report into --out DIR, as one "
                                   "grade run would have.")
    m.add_argument("parts", nargs="+", metavar="PART", help="the --out folder (or grades.json) of each shard")
    m.add_argument("--out", required=True, metavar="DIR", help="where the class's gradebook is written")
    n = sub.add_parser("new-exercise", help="add an exercise of your own (check file + notebook cells)",
                       description="Write course/checks/<ID>.py and add the exercise's cells (task, solution, "
                                   "check, hidden tests) to its chapter's notebook, each with a TODO to fill in.")
    n.add_argument("id", metavar="ID", help="the exercise id, chNN-exK (e.g. ch03-ex4: Exercise 3.4)")
    n.add_argument("--title", required=True, help="the exercise's title")
    n.add_argument("--answer", required=True, metavar="NAME", help="the name the student defines (e.g. HardTanhFunction)")
    n.add_argument("--points", type=float, default=1, help="points (default: 1)")
    n.add_argument("--minutes", type=float, default=10, help="estimated minutes (default: 10)")
    n.add_argument("--source", metavar="ROOT", help="the book's root folder (default: found from the current folder)")
    c = sub.add_parser("catalogue", help="the table of every exercise (points, minutes, objective, graded)",
                       description="Print the exercise catalogue generated from the exercise registry; --write "
                                   "puts it into book/instructor_guide.md, --check fails if the guide's copy is stale.")
    mode = c.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="update the table in book/instructor_guide.md")
    mode.add_argument("--check", action="store_true", help="exit 1 if book/instructor_guide.md's table is stale")
    c.add_argument("--source", metavar="ROOT", help="the book's root folder (default: found from the current folder)")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        from .assignment import parse_chapters

        if args.command == "release":
            from .release import release

            release(args.out, args.source, site=not args.no_site, chapters=parse_chapters(args.chapters),
                    repository_url=args.repository_url, repository_branch=args.repository_branch, title=args.title,
                    language=args.language)
        elif args.command == "grade":
            from . import shard as shard_mod
            from .grade import GradingIncomplete, GradingInterrupted, grade

            shard = shard_mod.parse(args.shard)
            try:
                grade(args.submissions, shard_mod.out_for(args.out, shard), source=args.source, timeout=args.timeout,
                      memory_mb=args.memory, jobs=args.jobs, chapters=parse_chapters(args.chapters),
                      assignment=args.assignment, roster=args.roster, lms_column=args.lms_column,
                      sandbox=not args.no_sandbox, shard=shard, seed=args.seed)
            except GradingInterrupted as e:
                print(f"minigrad-course: {e}", file=sys.stderr)
                return 128 + e.signum
            except GradingIncomplete as e:  # the gradebook says which rows and why; one line here
                print(f"minigrad-course: error: {e}", file=sys.stderr)
                return 3
        elif args.command == "merge":
            from .grade import GradingIncomplete
            from .shard import merge

            try:
                merge(args.parts, args.out)
            except GradingIncomplete as e:
                print(f"minigrad-course: error: {e}", file=sys.stderr)
                return 3
        elif args.command == "new-exercise":
            from .scaffold import new_exercise

            new_exercise(args.id, args.title, args.answer, points=args.points, minutes=args.minutes,
                         source=args.source)
        else:
            from . import catalogue

            return catalogue.main(args.source, write=args.write, check=args.check)
    except ImportError as e:
        print(f"minigrad-course: error: {e}. The course tools need the notebook stack: "
              "pip install nbformat nbclient ipykernel pyyaml matplotlib (and jupyter-book for the website).",
              file=sys.stderr)
        return 2
    except (OSError, ValueError, RuntimeError) as e:
        print(f"minigrad-course: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
