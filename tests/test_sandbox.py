"""The grading kernel's sandbox: what the student's code can see and do, and what the grader refuses."""
import asyncio
import json
import os
import subprocess
import sys

import pytest
from jupyter_client.blocking import BlockingKernelClient

from grader import grading
from grader.course import REPO, CourseError
from grader.sandbox import SANDBOX_UID, GradingKernelManager, sandbox_problem
from grader.verdicts import KernelBridge, TrustedTests, install_agent_code
from tests.course_files import FIXTURE_SOURCE

pytestmark = pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")

PROBE = """
import json, os, socket
seen = {"uid": os.getuid(), "cwd_files": sorted(os.listdir('.')), "env": sorted(os.environ),
        "visible": {name: os.path.exists(os.path.join(%(repo)r, name))
                    for name in ("solutions", "grader", "tests", ".git", "_grading", "attention_course", "datasets")}}
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    seen["network"] = True
except OSError:
    seen["network"] = False
try:
    open(os.path.join(%(repo)r, "attention_course", "checks.py"), "a")
    seen["package_writable"] = True
except OSError:
    seen["package_writable"] = False
print(json.dumps(seen))
"""


@pytest.fixture
def kernel(tmp_path):
    submission = tmp_path / "00_fixture"
    submission.mkdir()
    (submission / "data.csv").write_text("1,2\n")
    (submission / "00_fixture.ipynb").write_text("{}")
    manager = GradingKernelManager(kernel_name="python3", memory_mb=6000, cpu_seconds=60)
    asyncio.run(manager.start_kernel(cwd=str(submission)))
    client = BlockingKernelClient()
    client.load_connection_info(manager.get_connection_info())
    client.start_channels()
    client.wait_for_ready(timeout=60)
    yield manager, client
    client.stop_channels()
    asyncio.run(manager.shutdown_kernel(now=True))
    assert not manager.box.exists(), "the private folder outlived the kernel"


def run(client, code) -> str:
    out = []
    client.execute_interactive(code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", "")))
    return "".join(out)


def test_the_kernel_sees_its_submission_and_the_course_package_only(kernel):
    _, client = kernel
    seen = json.loads(run(client, PROBE % {"repo": str(REPO)}))
    assert seen["uid"] == SANDBOX_UID
    assert seen["cwd_files"] == ["data.csv"], "the submission's files, not the notebook being graded"
    assert seen["visible"] == {"solutions": False, "grader": False, "tests": False, ".git": False,
                               "_grading": False, "attention_course": True, "datasets": True}
    assert not seen["network"] and not seen["package_writable"]
    assert "JPY_PARENT_PID" not in seen["env"] and "JUPYTER_CONFIG_PATH" not in seen["env"]


def test_test_cells_run_in_the_grader_and_student_objects_decide_nothing(kernel):
    manager, client = kernel
    run(client, "class Same:\n    def __eq__(self, other):\n        return True\n    def __bool__(self):\n"
                "        return True\n\ndef always():\n    return Same()\n\ndef double(x):\n    return 2 * x")
    bridge = KernelBridge(client, is_alive=lambda: True, interrupt=lambda: None, output=lambda text: None)
    bridge.run_code(install_agent_code(), timeout=30)
    sent = []
    execute = client.execute
    client.execute = lambda code, **kwargs: sent.append(code) or execute(code, **kwargs)
    tests = TrustedTests(bridge, ["import numpy as np"])
    assert tests.run("assert always() == 3", "<t1>", 30)[-1]["ename"] == "AssertionError"
    assert tests.run("assert bool(always())", "<t2>", 30) == [], "a Remote is truthy like any object"
    assert tests.run("assert np.array_equal(double(np.arange(3)), [0, 2, 4])", "<t3>", 30) == []
    failed = tests.run("expected_8317 = 8319\nassert double(4159) == expected_8317, 'double(4159)'", "<t4>", 30)
    assert failed[-1]["ename"] == "AssertionError" and failed[-1]["evalue"] == "double(4159)"
    assert sent and not any("8319" in code or "expected_8317" in code for code in sent), \
        "test code or an expected value reached the student's kernel"


def test_grade_refuses_without_a_sandbox_and_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(grading, "sandbox_problem", lambda: "bubblewrap is not installed: install bubblewrap")
    with pytest.raises(CourseError, match="cannot grade safely: bubblewrap is not installed.*--unsafe-no-sandbox"):
        grading.Grader(tmp_path / "workspace", source=FIXTURE_SOURCE)
    assert grading.Grader(tmp_path / "unsafe", source=FIXTURE_SOURCE, sandbox=False).config.SandboxedExecute.sandbox is False


def test_the_unsafe_flag_is_printed_on_every_run():
    run_ = subprocess.run([sys.executable, "-m", "grader", "grade", "--unsafe-no-sandbox", "--assignment", "nope"],
                          cwd=REPO, capture_output=True, text=True, env=dict(os.environ))
    assert "WARNING: grading WITHOUT a sandbox" in run_.stderr and run_.returncode == 2
