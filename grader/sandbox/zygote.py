"""Grading kernels forked from a zygote: the notebook's libraries and ipykernel imported once per grader process,
each kernel a fresh fork of that Python that enters its own bubblewrap sandbox.

A kernel started as a new Python imports TensorFlow in the notebook's setup cell: about 3 s of CPU a notebook,
the same for every student. The zygote, a Python started once per grader process, kernel environment and set of
libraries (as the kernel's user, outside any sandbox, with the kernel's environment and nothing of the grader's),
imports ALWAYS and the libraries the assignment declares (`[kernel] imports` in course/<assignment>/
assignment.toml: TensorFlow and Keras for the notebooks that use them; a notebook that does not gets a zygote
without them, which starts in a fraction of a second) and then only forks. For each kernel
(grader.sandbox.bubblewrap.GradingKernelManager):

1. the grader makes the kernel's sandbox with bubblewrap as for any kernel (namespaces, file system, the copy of
   the submission, seccomp filter, cgroups), whose first process then waits on its standard input instead of
   starting Python;
2. the grader opens that process's namespaces (/proc/PID/ns/*) and hands them to the zygote with the kernel's
   output pipe and the write end of the waiting process's input; the zygote forks a child and says its pid;
   the grader moves the child into the kernel's cgroups, then tells it to go;
3. the child joins the sandbox's namespaces (the user namespace that owns them, then IPC, UTS, network, PID and
   mount, then the sandbox's own user namespace: the same uid, file system and limits on new namespaces as the
   process bubblewrap started), drops every capability, sets no_new_privs and the sandbox's seccomp filter, the
   kernel's rlimits, a new session, the working folder and the environment, and forks the kernel, a process of
   the sandbox's PID namespace that runs ipykernel as `python -m ipykernel_launcher` does;
4. the child waits for the kernel and writes its exit status to the waiting process, which exits with it, so
   bubblewrap ends as a kernel it had started would (128 + the signal after a signal). Killing bubblewrap ends
   the PID namespace and the kernel; the child dies with the zygote, and the kernel with the child.

A kernel still serves one submission: each is its own fork, in its own sandbox, and nothing of a kernel reaches
the zygote or the next kernel. What a kernel shares with the zygote is what it could read anyway: the memory of a
Python that imported the course's libraries (no file, no environment variable of the grader) and its address
space layout. This module's server side (`main`, run as `python -m grader.sandbox.zygote`) imports nothing of
the grader but its limits, so the zygote's memory holds nothing of the grader's work either; the kernel forgets
even those modules.
"""
import ctypes
import fcntl
import gc
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

from grader.limits import FIXED

# What every notebook's setup cell imports, and the kernel itself; an assignment adds its own libraries.
ALWAYS = ("numpy", "ipykernel.kernelapp")
NAMESPACES = ("ipc", "uts", "net", "pid", "mnt", "user")  # the order they are joined in, after their owner
CONTROL_FD = 3  # the zygote's end of its control socket
READY = b"ready"

_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP = 1, 24, 38, 22
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_SECCOMP_MODE_FILTER = 2
_NS_GET_USERNS = 0xB701
_CAPABILITY_VERSION_3 = 0x20080522


class ZygoteError(RuntimeError):
    """A kernel could not be forked into its sandbox; the kernel manager reports it as a failed start."""


# -- the zygote (a process of its own) --------------------------------------------------------------------

def main(imports=()):
    """Import ALWAYS and `imports`, say so on the control socket, then fork a kernel for each request until it
    closes."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the zygote ends with its grader
    control = socket.socket(fileno=CONTROL_FD)
    for name in (*ALWAYS, *imports):
        try:
            __import__(name)
        except Exception as error:  # noqa: BLE001 (an assignment's library missing or broken: the grader says which)
            control.sendall(f"import {name}: {type(error).__name__}: {error}"[:1000].encode())
            return
    os.environ.pop("KERAS_HOME")  # read by Keras's import only; a kernel's environment is its own
    # The imported objects live as long as every kernel: out of the collector's way, so that its passes neither
    # walk them nor copy their pages into each kernel.
    gc.collect()
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked children are reaped by the kernel, not waited for
    control.sendall(READY)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, FIXED["zygote_request_bytes"].value, 16)
        except OSError:
            return
        if not message:
            return
        child = os.fork()
        if child == 0:
            try:
                os.close(control.detach())
                _become_kernel(json.loads(message), fds)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        control.sendall(json.dumps({"pid": child}).encode())


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return libc


def _check(result: int, what: str):
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _become_kernel(request: dict, fds: list):
    """The forked child: wait for the grader, enter the sandbox with nothing of the zygote's rights, fork the
    kernel, relay how it ended. A failure is reported on the go socket (by the kernel once it has checked its
    rights from inside) and ends the child."""
    libc = _libc()
    *namespace_fds, output, status_pipe, go_fd = fds
    go = socket.socket(fileno=go_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this child waits for its kernel
    try:
        _check(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
        if go.recv(16) != b"go":  # the grader moved this process into the kernel's cgroups, or gave up
            return
        # Read in the grader's view: the sandbox shows neither.
        program = Path(request["seccomp"]).read_bytes()
        last_capability = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
        namespaces = dict(zip(NAMESPACES, namespace_fds))
        owner = fcntl.ioctl(namespaces["ipc"], _NS_GET_USERNS)
        for name, fd in [("owner of the sandbox's namespaces", owner), *namespaces.items()]:
            _check(libc.setns(fd, 0), f"setns({name})")
        for fd in [owner, *namespace_fds]:
            os.close(fd)
        _drop_privileges(libc, program, last_capability)
        for kind, (soft, hard) in request["rlimits"].items():
            resource.setrlimit(getattr(resource, kind), (soft, hard))
        os.setsid()
        os.chdir(request["workdir"])
        kernel = os.fork()
        if kernel == 0:
            os.close(status_pipe)
            try:
                _check(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
                _check_dropped()
                go.sendall(b"started")
                go.close()
            except Exception as error:  # noqa: BLE001 (reported to the grader)
                go.sendall(f"{type(error).__name__}: {error}".encode()[:4096])
                os._exit(70)
            _run_kernel(request, output)
        go.close()
        os.close(output)
    except Exception as error:  # noqa: BLE001 (reported to the grader, which fails the kernel's start)
        go.sendall(f"{type(error).__name__}: {error}".encode()[:4096])
        return
    _, status = os.waitpid(kernel, 0)
    code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    os.write(status_pipe, f"{code}\n".encode())
    os._exit(0)


def _drop_privileges(libc, program: bytes, last_capability: int):
    """Every capability (the user namespace's, which setns gave), then no_new_privs and the seccomp filter."""
    _check(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "PR_CAP_AMBIENT_CLEAR_ALL")
    for capability in range(last_capability + 1):
        _check(libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0), "PR_CAPBSET_DROP")
    header = ctypes.create_string_buffer(struct.pack("Ii", _CAPABILITY_VERSION_3, 0))
    _check(libc.capset(header, ctypes.create_string_buffer(24)), "capset")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("HP", len(program) // 8, ctypes.addressof(filters)))
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "PR_SET_SECCOMP")


def _check_dropped():
    """From inside the sandbox's PID namespace (its /proc): no capability left, no_new_privs, the filter on."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    for field in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        if int(status[field], 16):
            raise PermissionError(f"{field} is {status[field].strip()} after every capability was dropped")
    if status["NoNewPrivs"].strip() != "1" or status["Seccomp"].strip() != "2":
        raise PermissionError("no_new_privs or the seccomp filter did not hold")


def _run_kernel(request: dict, output: int):
    """The kernel: standard streams to the kernel's log, its environment alone, ipykernel as its launcher runs it."""
    try:
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        os.environ.clear()
        os.environ.update(request["environment"])
        for name in [name for name in sys.modules if name == "grader" or name.startswith("grader.")]:
            del sys.modules[name]  # a kernel started as a new Python has none of the grader's modules
        import random

        import numpy
        random.seed()  # the zygote's random states are every kernel's: each draws its own, as a new Python does
        numpy.random.seed()
        sys.argv = request["argv"][2:]  # ipykernel_launcher's own argv: [launcher, -f, connection file, ...]
        sys.path[0] = request["workdir"]
        if sys.path[0] == os.getcwd():  # as ipykernel_launcher does; InteractiveShellApp adds '' back
            del sys.path[0]
        from ipykernel import kernelapp
        kernelapp.launch_new_instance()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


# -- the grader's side --------------------------------------------------------------------------------------

_started = {}
_starting = threading.Lock()
_unavailable = []  # why kernels cannot be forked in this process, once that is known


def give_up(reason: str):
    """Kernels of this process start as new Pythons from now on (grader.sandbox.bubblewrap says so once)."""
    _unavailable.append(reason)


def unavailable() -> str:
    return _unavailable[0] if _unavailable else ""


def zygote_for(python: str, environment: dict, as_user: list, imports: tuple = ()) -> "Zygote":
    """This grader process's zygote for kernels of `environment` whose notebooks import `imports` (started on
    first use, again if it died)."""
    key = (os.getpid(), python, tuple(sorted(environment.items())), tuple(as_user), tuple(imports))
    with _starting:
        found = _started.get(key)
        if found is None or not found.alive():
            found = _started[key] = Zygote(python, environment, as_user, imports)
        return found


class Zygote:
    """One zygote process, started with a kernel environment and run as the kernel's user."""

    def __init__(self, python: str, environment: dict, as_user: list, imports: tuple = ()):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        os.set_inheritable(theirs.fileno(), True)
        launch = (f"import os, sys; os.dup2({theirs.fileno()}, {CONTROL_FD}); "
                  "from grader.sandbox.zygote import main; main(sys.argv[1:])")
        # Keras's folder as a kernel's (its home), never created outside the sandbox: the host has no such home
        environment = dict(environment, KERAS_HOME=f"{environment['HOME']}/.keras")
        self.process = subprocess.Popen([*as_user, python, "-c", launch, *imports], env=environment,
                                        pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True, cwd="/")
        theirs.close()
        self.control = ours
        self.lock = threading.Lock()
        self.control.settimeout(FIXED["zygote_start_seconds"].value)
        try:
            ready = self.control.recv(1024)
        except OSError:
            ready = b""
        if ready != READY:
            self.close()
            said = ready.decode(errors="replace") if ready else f"exit code {self.process.poll()}"
            raise ZygoteError(f"the kernel zygote did not start ({said})")

    def fork(self, request: dict, namespace_fds: list, output: int, status_pipe: int) -> "ForkedKernel":
        """Fork a kernel for `request`; it waits for ForkedKernel.go."""
        seconds = FIXED["zygote_answer_seconds"].value
        message = json.dumps(request).encode()
        if len(message) > FIXED["zygote_request_bytes"].value:
            raise ZygoteError(f"a request to the zygote of {len(message):,} bytes is over its limit")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self.lock:
                self.control.settimeout(seconds)
                socket.send_fds(self.control, [message],
                                [*namespace_fds, output, status_pipe, theirs.fileno()])
                reply = self.control.recv(4096)
        except OSError as error:
            ours.close()
            raise ZygoteError(f"the kernel zygote did not answer: {error}") from error
        finally:
            theirs.close()
        if not reply:
            ours.close()
            raise ZygoteError(f"the kernel zygote ended (exit code {self.process.poll()})")
        return ForkedKernel(json.loads(reply)["pid"], ours, seconds)

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self):
        self.control.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class ForkedKernel:
    """A forked child waiting to become a kernel: `pid` (in the grader's PID namespace) until `go`."""

    def __init__(self, pid: int, channel: socket.socket, seconds: float):
        self.pid, self.channel = pid, channel
        channel.settimeout(seconds)

    def go(self):
        """Let the child enter its sandbox and fork the kernel; raise ZygoteError with its reason if it cannot."""
        try:
            self.channel.sendall(b"go")
            answer = self.channel.recv(4096)
        except OSError as error:
            answer = f"no answer ({error})".encode()
        finally:
            self.channel.close()
        if answer != b"started":
            raise ZygoteError("a grading kernel could not enter its sandbox: "
                              + (answer.decode(errors="replace") or "the forked child ended"))

    def abandon(self):
        self.channel.close()  # the child reads the end of its channel and exits


def namespace_fds(pid: int) -> list:
    """Open descriptors of `pid`'s namespaces, in NAMESPACES order; refused unless every one is another than the
    grader's own (a kernel is never forked into the grader's namespaces)."""
    opened = []
    try:
        for name in NAMESPACES:
            opened.append(os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC))
            if os.stat(f"/proc/self/ns/{name}").st_ino == os.fstat(opened[-1]).st_ino:
                raise ZygoteError(f"process {pid} shares the grader's {name} namespace: not a sandbox")
    except (OSError, ZygoteError):
        for fd in opened:
            os.close(fd)
        raise
    return opened


def innermost_process(pid: int) -> int:
    """The last of the line of only children that starts at `pid` (bubblewrap, its init, the sandbox's command)."""
    while True:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return pid
        if len(children) != 1:
            return pid
        pid = int(children[0])


if __name__ == "__main__":
    main()
