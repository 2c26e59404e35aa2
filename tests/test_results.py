"""results/: the figures that change with every run, written by the benchmarks and the test suite and read by
the manual (course_build/results.py, course_build/manual_results.py)."""
import json
import re
import subprocess
import sys
import textwrap

import pytest
from mkdocs.exceptions import PluginError

from course_build import manual_results, results
from tests.course_files import REPO


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "RESULTS", tmp_path)
    return tmp_path


def test_a_recorded_table_and_its_figures_appear_in_the_page(folder):
    results.record("bench", "a benchmark", ["notebook", "seconds"], [["`01`", 54.25], ["`02`", 1.9]],
                   notebooks=1289, run_seconds=1715, speedup=2.054)
    page = manual_results.render("Ran {{ results bench.notebooks }} in {{ results bench.run_seconds }} "
                                 "({{ results bench.speedup }}x) on {{ results bench:cores }} cores.\n\n{{ results bench }}")
    assert page.startswith("Ran 1,289 in 28 min 35 s (2.05x) on ")
    assert "| notebook | seconds |\n|---|---|\n| `01` | 54.2 |\n| `02` | 1.90 |" in page
    assert re.search(r"\*Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC on \d+ cores .* with `python -m .*`", page)
    assert json.loads((folder / "bench.json").read_text())["facts"]["notebooks"] == 1289


def test_a_name_or_figure_never_recorded_stops_the_build(folder):
    results.record("bench", "a benchmark", speedup=2.0)
    with pytest.raises(PluginError, match=r"page.md: no results/other.json \(recorded: bench\)"):
        manual_results.render("{{ results other }}", "page.md")
    with pytest.raises(PluginError, match="has no fact 'ratio'; it has speedup"):
        manual_results.render("{{ results bench.ratio }}", "page.md")
    with pytest.raises(ValueError, match="every row needs 2 cells"):
        results.record("bad", "rows of the wrong width", ["a", "b"], [[1]])


def test_the_manual_types_no_figure_the_runs_record():
    """Test counts and the suite's time come from results/tests.json, wherever the manual or README says them."""
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        typed = re.findall(r"\b\d[\d,]* tests (?:passed|collected|in \d)", page.read_text())
        assert not typed, f"{page.name} types a figure of a test run: {typed}; use {{{{ results tests.passed }}}}"


SESSION = """
from pathlib import Path
import course_build.results
course_build.results.RESULTS = Path({out!r})
from tests.conftest import STARTED, pytest_sessionfinish, pytest_sessionstart  # noqa: F401
"""


@pytest.mark.parametrize("arguments, failing, recorded", [
    ([], False, True), (["-k", "one"], False, False), (["-m", "not slow"], False, False),
    (["test_a.py"], False, False), ([], True, False)])
def test_only_a_green_run_of_the_whole_suite_is_recorded(tmp_path, arguments, failing, recorded):
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (project / "tests" / "conftest.py").write_text(SESSION.format(out=str(tmp_path / "out")))
    (project / "tests" / "test_a.py").write_text(textwrap.dedent(f"""
        import pytest
        def test_one(): assert {not failing}
        def test_two(): pass
        @pytest.mark.skip(reason="shown as skipped")
        def test_three(): pass
        """))
    if arguments[:1] == ["test_a.py"]:
        arguments = [str(project / "tests" / "test_a.py")]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          *arguments], cwd=project, capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert run.returncode == (1 if failing else 0), run.stdout + run.stderr
    written = tmp_path / "out" / "tests.json"
    assert written.is_file() == recorded, run.stdout
    if recorded:
        facts = json.loads(written.read_text())["facts"]
        assert facts["passed"] == 2 and facts["skipped"] == 1 and facts["workers"] == 1, facts
