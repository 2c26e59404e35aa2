"""The README is short and the manual in docs/ builds: MkDocs in strict mode (no broken link, anchor or page left
out of the navigation), and every link of the README reaches a file of the repository."""
import re
import subprocess
import sys

import yaml

from tests.course_files import REPO

README_LIMIT = 12 * 1024
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_short_and_names_each_audience():
    readme = (REPO / "README.md").read_bytes()
    assert len(readme) < README_LIMIT, f"README.md is {len(readme):,} bytes, above {README_LIMIT:,}: move detail to docs/"
    text = readme.decode()
    for section in ("## Set up", "## Students", "## Instructors", "## Operators", "## Developers"):
        assert section in text, f"README.md has no {section!r} section"


def test_every_link_of_the_readme_reaches_a_file():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    local = [target for target in LINK.findall(text) if "://" not in target and not target.startswith("#")]
    assert local, "the README links to the manual"
    missing = [target for target in local if not (REPO / target.split("#")[0]).is_file()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_every_page_of_the_manual_is_in_its_navigation():
    def pages(nav):
        for entry in nav:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from (pages(value) if isinstance(value, list) else [value])
    nav = set(pages(yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]))
    on_disk = {path.name for path in (REPO / "docs").glob("*.md")}
    assert nav == on_disk, f"in docs/ but not in the navigation: {on_disk - nav}; missing: {nav - on_disk}"


def test_the_manual_builds_in_strict_mode(tmp_path):
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                           cwd=REPO, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "security" / "index.html").is_file()
