"""grader.sandbox.seccomp: the filter denies what it lists with EPERM, and it is the filter that denies it.

The calls tried here (io_uring, the kernel keyring, ptrace, unshare) succeed for an unprivileged
process in the same bubblewrap sandbox without the filter, so a pass is not the work of missing
capabilities or a sysctl. The grading kernel's own filter: tests/test_sandbox.py.
"""
import ctypes
import ctypes.util
import json
import os
import subprocess
import sys

import pytest

from grader.sandbox import seccomp
from grader.sandbox.bubblewrap import SANDBOX_UID, sandbox_problem

pytestmark = pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")

# Each call with arguments that succeed unfiltered: io_uring_setup(1 entry), keyctl(KEYCTL_GET_KEYRING_ID,
# KEY_SPEC_SESSION_KEYRING), ptrace(PTRACE_TRACEME) in a child, unshare(0).
PROBE = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
numbers = json.loads(sys.argv[1])
def call(name, *args):
    result = libc.syscall(numbers[name], *args)
    return "ok" if result >= 0 else os.strerror(ctypes.get_errno())
params = ctypes.create_string_buffer(120)
seen = {"io_uring_setup": call("io_uring_setup", 1, params), "keyctl": call("keyctl", 0, -3),
        "unshare": call("unshare", 0)}
child = os.fork()
if child == 0:
    os._exit(0 if libc.syscall(numbers["ptrace"], 0, 0, 0, 0) == 0 else ctypes.get_errno())
seen["ptrace"] = "ok" if os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0 else "Operation not permitted"
seen["status"] = [line.split()[1] for line in open("/proc/self/status") if line.startswith("Seccomp:")]
print(json.dumps(seen))
"""
NUMBERS = {name: ctypes.CDLL(ctypes.util.find_library("seccomp")).seccomp_syscall_resolve_name(name.encode())
           for name in ("io_uring_setup", "keyctl", "unshare", "ptrace")}


def _in_bwrap(filter_path=None) -> dict:
    command = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
               "--uid", str(SANDBOX_UID), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    if filter_path is not None:
        command = seccomp.with_filter(filter_path, [*command, "--seccomp", str(seccomp.FILTER_FD)])
    command += ["--", sys.executable, "-c", PROBE, json.dumps(NUMBERS)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_filter_denies_what_runs_unfiltered(tmp_path):
    unfiltered = _in_bwrap()
    assert unfiltered == {"io_uring_setup": "ok", "keyctl": "ok", "unshare": "ok", "ptrace": "ok", "status": ["0"]}
    filtered = _in_bwrap(seccomp.write_filter(tmp_path / "filter.bpf"))
    denied = os.strerror(1)
    assert filtered == {"io_uring_setup": denied, "keyctl": denied, "unshare": denied, "ptrace": denied,
                        "status": ["2"]}


def test_the_filter_lists_what_container_runtimes_deny():
    denied = set(seccomp.denied_here())
    assert {"bpf", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key",
            "request_key", "ptrace", "mount", "umount2", "pivot_root", "setns", "unshare", "open_tree",
            "move_mount", "fsopen", "userfaultfd", "kexec_load", "init_module", "finit_module"} <= denied
    # a notebook's own needs stay allowed
    assert not denied & {"clone", "clone3", "execve", "mmap", "read", "write", "openat", "socket", "futex"}


def test_the_program_file_is_read_only(tmp_path):
    path = seccomp.write_filter(tmp_path / "filter.bpf")
    assert path.stat().st_size > 0 and (path.stat().st_mode & 0o222) == 0
