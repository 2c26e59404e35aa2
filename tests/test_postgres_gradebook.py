"""Grading with the gradebook in PostgreSQL (for several graders or a large class).

Uses COURSE_TEST_POSTGRES_URL when set; otherwise starts a throwaway PostgreSQL server on a free
loopback port when the server binaries are installed (Debian: apt-get install postgresql); skips if neither.
"""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from grader.running.grading import Grader
from tests.browser.lab import free_port
from tests.course_files import FIXTURE_SOURCE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def postgres_url():
    if os.environ.get("COURSE_TEST_POSTGRES_URL"):
        yield os.environ["COURSE_TEST_POSTGRES_URL"]
        return
    initdb = shutil.which("initdb") or next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))), None)
    if not initdb:
        pytest.skip("no PostgreSQL server: apt-get install postgresql, or set COURSE_TEST_POSTGRES_URL")
    bin_dir = Path(initdb).resolve().parent
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    root = Path(tempfile.mkdtemp(prefix="course-pg-"))
    root.chmod(0o755)
    data = root / "data"
    data.mkdir()
    if as_postgres:
        shutil.chown(data, "postgres", "postgres")
    port = free_port()
    subprocess.run([*as_postgres, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
                   check=True, capture_output=True)
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1"
    # -l: without a log file the server keeps our pipes open and subprocess.run never returns
    subprocess.run([*as_postgres, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                    str(data / "server.log"), "-w", "start"], check=True, capture_output=True, timeout=120)
    try:
        subprocess.run([*as_postgres, "psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                        "-c", "CREATE DATABASE gradebook"], check=True, capture_output=True)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/gradebook"
    finally:
        subprocess.run([*as_postgres, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_parallel_grading_against_postgresql(tmp_path, postgres_url):
    grader = Grader(tmp_path / "workspace", source=FIXTURE_SOURCE, workers=2, db_url=postgres_url)
    results = grader.run(progress=False)
    assert {r.student: r.score for r in results} == {"sample_solved": 5.0, "sample_partial": 2.0, "sample_blank": 0.0}
    assert grader.db_url.startswith("postgresql")
    assert (grader.workspace / "grades.csv").read_text().count("\n") == 4
