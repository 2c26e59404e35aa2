"""The grading kernel's sandbox: what the student's code can see and do, and what the grader refuses."""
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.running import grading
from grader.sandbox import cgroups, bubblewrap as sandbox
from grader.course import REPO, CourseError
from grader.limits import GradingLimits
from grader.sandbox.bubblewrap import SANDBOX_UID, GradingKernelManager, sandbox_problem
from grader.trusted.trusted_tests import connect_tests
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
    manager = GradingKernelManager(kernel_name="python3", limits=GradingLimits(memory_mb=6000, cpu_seconds=60))
    asyncio.run(manager.start_kernel(cwd=str(submission)))
    client = manager.blocking_client()  # alive is asked of the manager's process, not a heartbeat a busy machine misses
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
    tests = connect_tests(manager.get_connection_info(), ["import numpy as np"], is_alive=lambda: True,
                          interrupt=lambda: None)
    sent, session = [], tests.bridge.client.session
    send = session.send  # every message to the kernel (requests, and execute requests) goes through it

    def spy(stream, message, content=None, *args, buffers=None, **kwargs):
        whole = message if isinstance(message, dict) else content  # execute requests come built
        sent.append(json.dumps(whole, default=str) + "".join(bytes(b).decode("latin-1") for b in buffers or []))
        return send(stream, message, content, *args, buffers=buffers, **kwargs)
    session.send = spy
    assert tests.run("assert always() == 3", "<t1>", 30)[-1]["ename"] == "AssertionError"
    assert tests.run("assert bool(always())", "<t2>", 30) == [], "a Remote is truthy like any object"
    assert tests.run("assert np.array_equal(double(np.arange(3)), [0, 2, 4])", "<t3>", 30) == []
    failed = tests.run("expected_8317 = 8319\nassert double(4159) == expected_8317, 'double(4159)'", "<t4>", 30)
    assert failed[-1]["ename"] == "AssertionError" and failed[-1]["evalue"] == "double(4159)"
    assert sent and not any("8319" in text or "expected_8317" in text for text in sent), \
        "test code or an expected value reached the student's kernel"


def test_grade_refuses_without_a_sandbox_and_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(grading, "sandbox_problem", lambda: "bubblewrap is not installed: install bubblewrap")
    with pytest.raises(CourseError, match="cannot grade safely: bubblewrap is not installed.*--unsafe-no-sandbox"):
        grading.Grader(tmp_path / "workspace", source=FIXTURE_SOURCE)
    assert grading.Grader(tmp_path / "unsafe", source=FIXTURE_SOURCE, sandbox=False).limits.sandbox is False


def test_the_unsafe_flag_is_printed_on_every_run():
    run_ = subprocess.run([sys.executable, "-m", "grader", "grade", "--unsafe-no-sandbox", "--assignment", "nope"],
                          cwd=REPO, capture_output=True, text=True, env=dict(os.environ))
    assert "WARNING: grading WITHOUT a sandbox" in run_.stderr and run_.returncode == 2


@pytest.fixture
def root_only_view(monkeypatch):
    """A folder the sandbox binds read-only, holding a root-owned file of mode 0600 (as /etc and the
    Python environment may), to see whether the kernel's user is root outside."""
    folder = Path(tempfile.mkdtemp(prefix="root-view-"))
    folder.chmod(0o755)
    secret = folder / "secret.txt"
    secret.write_text("root only")
    secret.chmod(0o600)
    dirs = sandbox.course_package_dirs()
    monkeypatch.setattr(sandbox, "course_package_dirs", lambda: [*dirs, folder])
    yield secret
    shutil.rmtree(folder)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a grader running as root")
def test_the_kernel_is_an_unprivileged_user_outside_and_cannot_nest_namespaces(root_only_view, kernel):
    manager, client = kernel
    seen = json.loads(run(client, f"""
import json, os, subprocess
try:
    secret = open({str(root_only_view)!r}).read()
except OSError as error:
    secret = type(error).__name__
nested = subprocess.run(['unshare', '-Ur', 'true'], capture_output=True).returncode
open({str(manager.box / "run" / "probe")!r}, "w").close()  # its owner, seen from outside, is the kernel's user
print(json.dumps({{"secret": secret, "nested": nested, "etc": sorted(os.listdir('/etc'))}}))"""))
    owner = (manager.box / "run" / "probe").stat().st_uid
    assert owner == GradingLimits().kernel_uid != 0, f"the kernel is uid {owner} outside"
    assert seen["secret"] == "PermissionError"
    assert seen["nested"] != 0, "the kernel made a user namespace of its own"
    assert "shadow" not in seen["etc"] and "gshadow" not in seen["etc"] and "ssh" not in seen["etc"]
    assert set(seen["etc"]) <= set(sandbox.ETC_FILES) | {"passwd", "group", "hosts"}


@pytest.mark.skipif(bool(cgroups.problem()), reason=f"no cgroups here: {cgroups.problem()}")
def test_the_kernel_has_its_own_cgroups_and_sized_file_systems(kernel):
    manager, client = kernel
    group = manager.group
    assert int((group.paths["pids"] / "pids.max").read_text()) == GradingLimits().processes
    assert int((group.paths["memory"] / "memory.limit_in_bytes").read_text()) == 6000 * 2 ** 20
    assert group.pids(), "the kernel's processes are in its group"
    written = json.loads(run(client, """
import json, os
written = {}
for folder in ('/tmp', '/dev/shm', os.path.expanduser('~'), '/'):
    size = 0
    try:
        with open(os.path.join(folder, 'filler'), 'wb') as handle:
            for _ in range(80):
                handle.write(b'x' * 2 ** 23)
                size += 2 ** 23
    except OSError:
        pass
    written[folder] = size
print(json.dumps(written))"""))
    limit = GradingLimits().tmp_mb * 2 ** 20
    assert written["/tmp"] <= limit and written["/dev/shm"] <= limit
    assert written[os.path.dirname(sandbox.HOME + "/")] <= GradingLimits().home_mb * 2 ** 20
    assert written["/"] == 0, "the sandbox's root is read-only"
    # The one folder shared with the grader (its sockets') is on a tmpfs: writing there is the kernel's memory.
    assert sandbox.boxes_folder() in manager.box.parents
    usage = group.paths["memory"] / "memory.usage_in_bytes"
    before = int(usage.read_text())
    run(client, f"open({str(manager.box / 'run' / 'filler')!r}, 'wb').write(b'x' * 2 ** 26)")
    assert int(usage.read_text()) - before >= 2 ** 26 * 0.9, "a file in the sockets' folder escaped the memory limit"
    paths = list(group.paths.values())
    asyncio.run(manager.shutdown_kernel(now=True))
    assert not any(path.exists() for path in paths), "the kernel's cgroups outlived it"


def test_nothing_from_the_kernel_is_written_into_the_tests_objects(kernel):
    manager, client = kernel
    run(client, "def zero_out(values):\n    values[:] = [0.0] * len(values)\n    return 0.0\n\n"
                "def scale(array):\n    array *= 0\n    return array")
    tests = connect_tests(manager.get_connection_info(), ["import numpy as np\nfrom attention_course.checks import *"],
                          is_alive=lambda: True, interrupt=lambda: None)
    assert tests.run("values = [4.0, 8.0]\nzero_out(values)\nassert values == [4.0, 8.0], values", "<t1>", 30) == []
    assert tests.run("a = np.arange(3.0)\nscale(a)\nassert a.tolist() == [0.0, 1.0, 2.0]", "<t2>", 30) == []
    changed = tests.run("_, changed = check_call('zero_out', zero_out, [1.0], report_changes=True)\n"
                        "check_true('zero_out leaves its input unchanged', not changed, 'unchanged', changed)",
                        "<t3>", 30)
    assert changed[-1]["ename"] == "AssertionError" and "got [0]" in changed[-1]["evalue"]


def test_a_sequence_crosses_once_and_a_cut_short_test_fails(kernel):
    manager, client = kernel
    run(client, "class Liar:\n    def __len__(self):\n        return 3\n    def __iter__(self):\n        return iter([])\n"
                "\ndef items():\n    return Liar()")
    tests = connect_tests(manager.get_connection_info(), ["from attention_course.checks import *"],
                          is_alive=lambda: True, interrupt=lambda: None)
    assert tests.run("assert len(items()) == 0", "<t1>", 30) == [], "len() and iteration agree"
    cut = tests.run("for item in items():\n    check_true('item', item > 0, 'positive', item)", "<t2>", 30)
    assert cut[-1]["ename"] == "ChecksNotRun" and "ran 0 of the 1 checks" in cut[-1]["evalue"]
    optional = tests.run("if len(items()) > 5:\n    assert False\nassert True", "<t3>", 30)
    assert optional == [], "a check inside an if is not required"


def test_call_backs_live_only_during_their_test_and_take_bounded_input(kernel):
    manager, client = kernel
    run(client, "kept = []\n\ndef keep(function):\n    kept.append(function)\n    return function(2)\n\n"
                "def call_kept(x):\n    return kept[0](x)\n\ndef send_big(function):\n"
                "    return function('x' * (24 * 2 ** 20))")
    tests = connect_tests(manager.get_connection_info(), [], is_alive=lambda: True, interrupt=lambda: None)
    assert tests.run("assert keep(lambda x: 3 * x) == 6", "<t1>", 30) == []
    later = tests.run("call_kept(5)", "<t2>", 30)
    assert later[-1]["ename"] == "RuntimeError" and "belonged to a test that has ended" in later[-1]["evalue"]
    big = tests.run("send_big(len)", "<t3>", 30)
    assert big[-1]["ename"] == "RuntimeError" and "above the limit" in big[-1]["evalue"]


def test_a_reply_above_the_limit_is_refused_before_it_is_held(kernel):
    manager, client = kernel
    run(client, "import numpy\n\ndef big():\n    return numpy.zeros(8 * 2 ** 20)")  # 64 MB of float64
    tests = connect_tests(manager.get_connection_info(), [], is_alive=lambda: True, interrupt=lambda: None,
                          max_message_bytes=16 * 2 ** 20)
    refused = tests.run("big()", "<t1>", 60)
    assert refused[-1]["ename"] in ("StudentCodeError", "ValueError"), refused
    assert "16 MB" in refused[-1]["evalue"] or "16,777,216" in refused[-1]["evalue"]


def test_a_reply_that_would_grow_when_decoded_is_refused_before_it_is_decoded(kernel):
    """Arrays travel as bytes; a reply's JSON is held to message_json_mb (20 MB) and 500,000 items before
    jupyter_client decodes the message that carries it (decoded, two 50 MB replies of small items once took the
    grader from 192 to 1,557 MB)."""
    import resource
    manager, client = kernel
    run(client, "def many():\n    return [[]] * 510_000\n\ndef long_text():\n    return 'x' * (21 * 2 ** 20)")
    tests = connect_tests(manager.get_connection_info(), [], is_alive=lambda: True, interrupt=lambda: None)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    many = tests.run("many()", "<t1>", 60)
    assert many[-1]["ename"] == "StudentCodeError" and "over 500,000 items" in many[-1]["evalue"], many
    text = tests.run("long_text()", "<t2>", 60)
    assert text[-1]["ename"] == "StudentCodeError" and "takes above 20 MB" in text[-1]["evalue"], text
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 150_000  # KB


BIG_MESSAGE = """
kernel = get_ipython().kernel
kernel.session.send(kernel.iopub_socket, "display_data", {"data": {"text/plain": "big"}, "metadata": {}},
                    parent=kernel.get_parent("shell"), buffers=[b"x" * (512 * 1024)] * 6)
"""


def cell_messages(tmp_path, limits: GradingLimits, code: str) -> list:
    """The IOPub messages of one cell running `code`, read through the notebook's client (what nbclient uses:
    the kernel manager's client(), which must be the size-limited one of grader.sandbox.kernel_client)."""
    from grader.sandbox.kernel_client import LimitedKernelClient
    manager = GradingKernelManager(kernel_name="python3", limits=limits)

    async def scenario():
        await manager.start_kernel(cwd=str(tmp_path))
        client = manager.client()
        assert isinstance(client, LimitedKernelClient)
        assert (client.max_message_bytes, client.max_json_bytes) == (limits.message_mb * 2 ** 20,
                                                                     limits.message_json_mb * 2 ** 20)
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            cell = client.execute(code)
            seen = []
            while not seen or seen[-1]["content"].get("execution_state") != "idle":
                message = await client.get_iopub_msg(timeout=60)
                if message["parent_header"].get("msg_id") == cell:
                    seen.append(message)
            return seen
        finally:
            client.stop_channels()
            await manager.shutdown_kernel(now=True)

    return asyncio.run(scenario())


def test_the_notebooks_client_refuses_a_message_above_the_limit_as_it_comes(tmp_path):
    """3 MB sent in 512 KB frames by a kernel limited to 1 MB never reaches the grader; a stand-in note
    addressed to the same cell does."""
    seen = cell_messages(tmp_path, GradingLimits(memory_mb=6000, cpu_seconds=60, message_mb=1), BIG_MESSAGE)
    refused = [m for m in seen if m["msg_type"] == "stream" and "was refused" in m["content"]["text"]]
    assert len(refused) == 1 and "3,1" in refused[0]["content"]["text"], seen
    assert not [m for m in seen if m["msg_type"] == "display_data" or m.get("buffers")]


# Under the 64 MB message limit: 9 MB of three million empty lists (decoded, about 200 MB), and 24 MB of text.
GROWING_MESSAGES = """
kernel = get_ipython().kernel
for metadata in ({"many": [[]] * 3_000_000}, {"long": "x" * (24 * 2 ** 20)}):
    kernel.session.send(kernel.iopub_socket, "display_data", {"data": {"text/plain": "big"}, "metadata": metadata},
                        parent=kernel.get_parent("shell"))
"""


def test_a_message_whose_json_would_grow_when_decoded_is_refused_before_it_is_decoded(tmp_path):
    """What jupyter_client decodes into objects (header, metadata, content) is held to message_json_mb and
    500,000 items before it is decoded, whatever the message's size: each display reaches the grader as a
    one-line note, and the grader does not grow by what decoding them would take."""
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seen = cell_messages(tmp_path, GradingLimits(memory_mb=6000, cpu_seconds=60), GROWING_MESSAGES)
    notes = [m["content"]["text"] for m in seen if m["msg_type"] == "stream" and "was refused" in m["content"]["text"]]
    assert len(notes) == 2, seen
    assert "holds about 3,000,0" in notes[0] and "500,000" in notes[0]
    assert "JSON part is 25,1" in notes[1] and "20,971,520" in notes[1]
    assert not [m for m in seen if m["msg_type"] == "display_data"]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KB


def test_grade_names_the_limits_it_cannot_enforce(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cgroups, "problem", lambda: "cgroups cannot be made here (the grader is not root), so "
                                                   "these limits are not enforced: the number of processes")
    grading.Grader(tmp_path / "workspace", source=FIXTURE_SOURCE)
    assert "WARNING: cgroups cannot be made here" in capsys.readouterr().err


def test_cgroups_problem_names_each_controller_it_cannot_use(monkeypatch):
    cgroups.problem.cache_clear()
    monkeypatch.setattr(cgroups, "_own_group", lambda controller: Path("/nonexistent") / controller)
    try:
        message = cgroups.problem()
    finally:
        cgroups.problem.cache_clear()
    assert all(cgroups.ENFORCES[c] in message for c in cgroups.CONTROLLERS)


STAND_IN_ANSWERS = ["def double(x):\n    return 2 * x", "def quadruple(x, times=double):\n    return times(times(x))",
                    "def apply(function, x):\n    return function(x) + 1"]


def test_correct_versions_stand_in_for_earlier_exercises_only_during_their_test(kernel):
    """One mistake costs once: a test that declares `calls` grades its exercise with the grader's correct
    versions of those functions, even where the student's function captured its own as a default, and they
    answer nothing once the test has ended; what the student's code printed meanwhile is withheld."""
    manager, client = kernel
    run(client, "def double(x):\n    return 3 * x\n\nkept = []\n\n"
                "def quadruple(x, times=double):\n    kept.append(times)\n    print('peek', times(41))\n"
                "    return times(times(x))\n\ndef use_kept(x):\n    return kept[0](x)")
    setup = ["import numpy as np\nfrom attention_course.checks import *\n"
             "from attention_course.dependencies import testing"]
    tests = connect_tests(manager.get_connection_info(), setup, is_alive=lambda: True, interrupt=lambda: None,
                          references=STAND_IN_ANSWERS)
    graded = tests.run("testing('quadruple', calls=('double',))\nassert quadruple(5) == 20, quadruple(5)", "<t1>", 30)
    assert [o for o in graded if o["output_type"] == "error"] == [], graded
    assert "peek" not in json.dumps(graded) and "not shown for this test" in json.dumps(graded), graded
    own = tests.run("assert quadruple(5) == 20, quadruple(5)", "<t2>", 30)
    assert own[-1]["ename"] == "AssertionError" and "45" in own[-1]["evalue"], "without `calls`, the student's own"
    assert "peek 123" in json.dumps(own), "the student's output is shown where no correct version answered"
    kept = tests.run("use_kept(1)", "<t3>", 30)
    assert kept[-1]["ename"] == "RuntimeError" and "belonged to a test that has ended" in kept[-1]["evalue"]
    restored = tests.run("assert double(2) == 6, double(2)", "<t4>", 30)
    assert restored == [], "the student's own function is back after the test"
    run(client, "def apply(function, x):\n    return 0\n\ndef shifted(x):\n    return apply(lambda y: 10 * double(y), x)")
    nested = tests.run("testing('shifted', calls=('double', 'apply'))\nassert shifted(3) == 61, shifted(3)", "<t5>", 30)
    assert [o for o in nested if o["output_type"] == "error"] == [], (
        "a correct version handed the student's own function calls it in the student's kernel", nested)
    unknown = tests.run("testing('quadruple', calls=('triple',))", "<t6>", 30)
    assert unknown[-1]["ename"] == "LookupError" and "triple" in unknown[-1]["evalue"]


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def test_a_correct_version_called_back_is_bounded_in_memory_and_time_outside_the_grader(kernel):
    """The student's code chooses a correct version's inputs: one asked for 8 GB fails in the student's code,
    as a RuntimeError naming the worker's memory limit, with the grader's memory unchanged; one that never
    returns is stopped at the test's deadline, and the next test's call-backs are answered again."""
    from grader.trusted import reference_worker
    manager, client = kernel
    run(client, "def use(function, *args):\n    try:\n        return function(*args)\n"
                "    except RuntimeError as error:\n        return str(error)\n\n"
                "def ask_hungry(n):\n    return use(hungry, n)\n\ndef ask_spin():\n    return use(spin)")
    setup = ["from attention_course.dependencies import testing"]
    answers = ["def hungry(n):\n    return len(bytearray(n))", "def spin():\n    while True:\n        pass"]
    tests = connect_tests(manager.get_connection_info(), setup, is_alive=lambda: True, interrupt=lambda: None,
                          references=answers, memory_mb=800)
    before = rss_mb()
    small = tests.run("testing('ask_hungry', calls=('hungry',))\nassert ask_hungry(1000) == 1000", "<t1>", 60)
    assert [o for o in small if o["output_type"] == "error"] == [], small
    hungry = tests.run("testing('ask_hungry', calls=('hungry',))\nmessage = ask_hungry(8 * 2 ** 30)\n"
                       "assert 'its limit is 800 MB' in message, message", "<t2>", 60)
    assert [o for o in hungry if o["output_type"] == "error"] == [], hungry
    assert rss_mb() - before < 100, "the correct version's memory is the worker's, not the grader's"
    spun = tests.run("testing('ask_spin', calls=('spin',))\nask_spin()", "<t3>", 5)
    assert tests.timed_out and spun[-1]["ename"] == "CellTimeoutError", spun
    assert reference_worker.shared_worker(800).process is None, "the worker still running it was killed"
    again = tests.run("testing('ask_hungry', calls=('hungry',))\nassert ask_hungry(7) == 7", "<t4>", 60)
    assert [o for o in again if o["output_type"] == "error"] == [], again
    reference_worker.shared_worker(800).close()


def test_the_kernel_runs_under_the_system_call_filter(kernel):
    """Every call grader.sandbox.seccomp denies fails with EPERM in the grading kernel, whatever its arguments (the
    filter decides before the call runs; tests/test_seccomp.py shows such calls succeed without it)."""
    from grader.sandbox import seccomp
    import ctypes.util
    resolve = ctypes.CDLL(ctypes.util.find_library("seccomp")).seccomp_syscall_resolve_name
    numbers = {name: resolve(name.encode()) for name in seccomp.denied_here()}
    _, client = kernel
    seen = json.loads(run(client, f"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
seen = {{}}
for name, number in {numbers!r}.items():
    seen[name] = -1 if libc.syscall(number, 0, 0, 0, 0, 0, 0) == -1 and ctypes.get_errno() == 1 else "allowed"
seen["status"] = [line.split()[1] for line in open("/proc/self/status") if line.startswith("Seccomp")]
print(json.dumps(seen))"""))
    assert seen.pop("status")[0] == "2", "the kernel runs in seccomp filter mode"
    assert seen == dict.fromkeys(numbers, -1)
