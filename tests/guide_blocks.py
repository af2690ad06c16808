"""Reading the instructor guide as a reader would: its sections and code blocks, for the tests that
follow it step by step (tests/test_instructor_guide.py, tests/test_course_custom_exercise.py)."""
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "book" / "instructor_guide.md"
_FENCE = re.compile(r"^(?P<fence>`{3,})(?P<directive>\{code-block\})?[ \t]*(?P<lang>[\w-]*)[ \t]*\n"
                    r"(?P<options>(?:[ \t]*:\w+:[^\n]*\n)*)(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)


@dataclass
class Block:
    lang: str
    caption: str
    body: str


def section(title: str, text: str | None = None) -> str:
    """The text of the ``## title`` section of the guide (up to the next ``## `` heading)."""
    text = GUIDE.read_text(encoding="utf-8") if text is None else text
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"the instructor guide has no section '## {title}'"
    return m.group(1)


def blocks(text: str) -> list[Block]:
    out = []
    for m in _FENCE.finditer(text):
        cap = re.search(r":caption:\s*(.*)", m.group("options") or "")
        out.append(Block(m.group("lang"), cap.group(1).strip() if cap else "", m.group("body")))
    return out


def commands(block: Block) -> list[str]:
    """The shell commands of a bash block (continuation lines joined, comments dropped)."""
    text = re.sub(r"\\\n\s*", " ", block.body)
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def run_command(cmd: str, cwd: Path) -> str:
    """Run one of the guide's `minigrad-course` commands as a shell would (the installed console
    script, on PATH next to this Python); fails with its output if it fails."""
    argv = shlex.split(cmd)
    assert argv[0] == "minigrad-course", cmd
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("MINIGRAD_COURSE_EXTRA_EXERCISES", None)
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout
