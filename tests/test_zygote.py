"""Kernels forked from the zygote (grader/sandbox/zygote.py): the same sandbox as a kernel started as a new Python,
the notebook's libraries already imported, and nothing shared between two kernels or with the zygote."""
import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from grader.limits import GradingLimits
from grader.sandbox import zygote
from grader.sandbox.bubblewrap import HOME, SANDBOX_UID, GradingKernelManager, sandbox_problem

pytestmark = pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")

PROBE = """
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
made = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD): a user namespace of its own
if made == 0:
    os._exit(0)
nested_user_namespace = made > 0
if made > 0:
    os.waitpid(made, 0)
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
print(json.dumps({
    "tensorflow_loaded": "tensorflow" in sys.modules, "uid": os.getuid(), "gid": os.getgid(), "pid": os.getpid(),
    "ppid": os.getppid(), "cwd": os.getcwd(), "files": sorted(os.listdir(".")), "processes": sorted(
        int(p) for p in os.listdir("/proc") if p.isdigit()), "environment": dict(os.environ),
    "capabilities": {k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
    "nested_user_namespace": nested_user_namespace, "no_new_privs": status["NoNewPrivs"].strip(),
    "seccomp": status["Seccomp"].strip(), "fds": fds,
    "keras_home": sys.modules["keras"].src.backend.config.keras_home() if "keras" in sys.modules else None,
    "sys_path": sys.path,
    "random": __import__("random").random(), "numpy_random": float(__import__("numpy").random.random())}))
"""


TENSORFLOW = ["tensorflow", "keras"]  # what notebooks 01, 03 and 05-08 declare ([kernel] imports)


def start(folder, name="00_fixture", forked=True, imports=(), **limits):
    submission = folder / name
    submission.mkdir(parents=True)
    (submission / "data.csv").write_text(f"{name}\n")
    manager = GradingKernelManager(kernel_name="python3", fork_from_zygote=forked, kernel_imports=list(imports),
                                   limits=GradingLimits(**{"memory_mb": 6000, "cpu_seconds": 60, **limits}))
    asyncio.run(manager.start_kernel(cwd=str(submission)))
    client = manager.blocking_client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    return manager, client


def stop(manager, client):
    client.stop_channels()
    asyncio.run(manager.shutdown_kernel(now=True))


def run(client, code, timeout=60) -> str:
    out = []
    client.execute_interactive(code, timeout=timeout, output_hook=lambda m: out.append(m["content"].get("text", "")))
    return "".join(out)


@pytest.fixture
def two_kernels(tmp_path):
    kernels = [start(tmp_path / "a", "00_fixture"), start(tmp_path / "b", "00_fixture")]
    yield kernels
    for manager, client in kernels:
        stop(manager, client)


def test_a_forked_kernel_is_a_fresh_process_of_its_own_sandbox_with_tensorflow_loaded(tmp_path):
    forked_kernel = start(tmp_path / "forked", imports=TENSORFLOW)
    cold_kernel = start(tmp_path / "cold", forked=False, imports=TENSORFLOW)
    try:
        forked, cold = (json.loads(run(client, PROBE)) for _, client in (forked_kernel, cold_kernel))
    finally:
        stop(*forked_kernel)
        stop(*cold_kernel)
    assert forked["tensorflow_loaded"] and not cold["tensorflow_loaded"]
    for seen in (forked, cold):
        assert seen["uid"] == seen["gid"] == SANDBOX_UID
        assert seen["cwd"] == f"{HOME}/00_fixture" and seen["files"] == ["data.csv"]
        assert set(seen["capabilities"].values()) == {"0000000000000000"}, seen["capabilities"]
        assert seen["no_new_privs"] == "1" and seen["seccomp"] == "2"
        assert not seen["nested_user_namespace"], "the kernel made a user namespace of its own"
    assert forked["keras_home"] == f"{HOME}/.keras"  # as the import in a new kernel sets it
    # Its PID namespace is the sandbox's (bubblewrap's init, the waiting shell, the kernel); its parent, outside it,
    # has no pid there. Nothing of the zygote's is open in it, and it sees the environment a new kernel sees.
    assert forked["ppid"] == 0 and forked["processes"] == [1, 2, forked["pid"]]
    assert forked["environment"] == cold["environment"]
    assert forked["sys_path"] == cold["sys_path"]
    assert not [target for target in forked["fds"].values() if target.startswith("/") and not target.startswith(
        ("/dev/null", "/proc/", HOME))], forked["fds"]


def test_a_notebook_that_declares_no_library_gets_a_zygote_without_tensorflow(tmp_path):
    """Notebooks 02 and 04 (and the tests' fixture) import NumPy only while graded: their kernels carry no TensorFlow, and their
    zygote is another process than the TensorFlow notebooks' one."""
    lean, full = start(tmp_path / "lean"), start(tmp_path / "full", imports=TENSORFLOW)
    try:
        seen = [json.loads(run(client, PROBE)) for _, client in (lean, full)]
    finally:
        stop(*lean)
        stop(*full)
    assert [s["tensorflow_loaded"] for s in seen] == [False, True]
    assert seen[0]["ppid"] == seen[1]["ppid"] == 0 and seen[0]["processes"] == [1, 2, seen[0]["pid"]]
    running = {key[-1] for key, found in zygote._started.items() if key[0] == os.getpid() and found.alive()}
    assert {(), tuple(TENSORFLOW)} <= running


def test_a_library_the_zygote_cannot_import_is_named_and_kernels_start_as_new_pythons(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(zygote, "_unavailable", [])
    manager, client = start(tmp_path, imports=["no_such_library_here"])
    try:
        seen = json.loads(run(client, PROBE))
    finally:
        stop(manager, client)
    assert seen["uid"] == SANDBOX_UID and seen["files"] == ["data.csv"] and seen["seccomp"] == "2"
    assert "import no_such_library_here: ModuleNotFoundError" in zygote.unavailable()
    assert "no_such_library_here" in caplog.text


def test_two_forked_kernels_share_no_file_process_network_or_random_state(two_kernels):
    (_, first), (_, second) = two_kernels
    run(first, f"""
import socket
open("/tmp/left-by-first", "w").write("x"); open("{HOME}/left-by-first", "w").write("x")
listener = socket.socket(); listener.bind(("127.0.0.1", 45678)); listener.listen()
abstract = socket.socket(socket.AF_UNIX); abstract.bind("\\0first-kernel"); abstract.listen()""")
    seen = json.loads(run(second, f"""
import json, os, socket
reached = []
for family, address in ((socket.AF_INET, ("127.0.0.1", 45678)), (socket.AF_UNIX, "\\0first-kernel")):
    try:
        socket.socket(family).connect(address)
        reached.append(address)
    except OSError:
        pass
print(json.dumps({{"files": [p for p in ("/tmp/left-by-first", "{HOME}/left-by-first") if os.path.exists(p)],
                  "reached": reached, "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}}))"""))
    assert seen == {"files": [], "reached": [], "processes": seen["processes"]}
    assert len(seen["processes"]) == 3, "the second kernel sees processes beyond its own sandbox's"
    draws = [json.loads(run(client, PROBE)) for client in (first, second)]
    assert draws[0]["random"] != draws[1]["random"] and draws[0]["numpy_random"] != draws[1]["numpy_random"]


def test_a_forked_kernel_keeps_its_limits_and_its_death_is_seen_with_its_cause(tmp_path):
    manager, client = start(tmp_path, cpu_seconds=3)
    try:
        assert manager.group is None or set(manager.group.pids()) >= {manager.provisioner.process.pid}
        out = run(client, "try:\n    bytearray(7000 * 2**20)\nexcept MemoryError:\n    print('MemoryError')")
        assert out.strip() == "MemoryError"
        client.execute("while True: pass")
        deadline = time.monotonic() + 60
        while asyncio.run(manager.is_alive()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not asyncio.run(manager.is_alive()), "the kernel outlived its CPU-time limit"
        # The sandbox's waiting process exits with the status the kernel ended with: SIGXCPU, as a new kernel's.
        assert manager.provisioner.process.poll() in (128 + 24, 128 + 9)
    finally:
        stop(manager, client)
    assert not manager.box.exists()


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(os.geteuid() != 0, reason="needs the kernel's cgroups (a grader running as root)")
def test_killing_the_sandbox_ends_the_forked_kernel_and_its_children(tmp_path):
    manager, client = start(tmp_path)
    try:
        run(client, "import subprocess; sleeper = subprocess.Popen(['sleep', '600'])")
        inside = manager.group.pids()
        assert len(inside) >= 5, "the sandbox, the forked child, the kernel and its child are in the kernel's groups"
        os.kill(manager.provisioner.process.pid, 9)
        deadline = time.monotonic() + 10
        while any(_running(pid) for pid in inside) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in inside if _running(pid)], "a process of the forked kernel outlived its sandbox"
    finally:
        stop(manager, client)


def test_a_kernel_is_never_forked_into_the_graders_own_namespaces():
    with pytest.raises(zygote.ZygoteError, match="shares the grader's"):
        zygote.namespace_fds(os.getpid())


def test_a_forked_kernel_that_exits_ends_its_sandbox_with_its_exit_code(tmp_path):
    """What nbclient sees as a dead kernel (the grader then fails the cell and restarts: tests/test_grading_*)."""
    manager, client = start(tmp_path)
    try:
        client.execute("import os; os._exit(3)")
        deadline = time.monotonic() + 30
        while asyncio.run(manager.is_alive()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert manager.provisioner.process.poll() == 3
    finally:
        stop(manager, client)


def test_a_kernel_that_cannot_be_forked_starts_as_a_new_python_and_so_do_the_next(tmp_path, monkeypatch, caplog):
    """Where the sandbox's namespaces are not the kernel user's (a setuid bubblewrap), grading goes on."""
    def refuse(pid):
        raise zygote.ZygoteError("setns(owner of the sandbox's namespaces): Operation not permitted")

    monkeypatch.setattr(zygote, "namespace_fds", refuse)
    monkeypatch.setattr(zygote, "_unavailable", [])
    for folder in ("first", "second"):
        manager, client = start(tmp_path / folder)
        try:
            seen = json.loads(run(client, PROBE))
        finally:
            stop(manager, client)
        assert not seen["tensorflow_loaded"] and seen["uid"] == SANDBOX_UID and seen["files"] == ["data.csv"]
        assert set(seen["capabilities"].values()) == {"0000000000000000"}
    assert zygote.unavailable().startswith("setns(owner")
    assert "cannot be forked from the zygote" in caplog.text
