"""Grading kernels in a bubblewrap sandbox: the student's code sees its own submission and nothing else.

nbgrader starts each grading kernel through a kernel manager; GradingKernelManager (set by
grader.preprocessors.SandboxedExecute, so the Formgrader's Autograde button uses it too) starts it as

    sh (joins its cgroups) -> prlimit -> setpriv (root only) -> bwrap -> sh (copies the submission) -> kernel

or, by default, has that last shell wait and forks the kernel into the sandbox from a Python that already imported
TensorFlow and ipykernel (grader.sandbox.zygote: the same namespaces, user, filter, limits and cgroups);

- an unprivileged host user: a grader running as root drops to `GradingLimits.kernel_uid` before
  bubblewrap, so the kernel's uid maps to that user outside, never to root; a grader that is not root
  runs kernels as itself. User namespaces cannot be made inside (`--disable-userns`);
- a user, PID, network, IPC and UTS namespace of its own; no network (the grader talks to it over
  ipc sockets in a folder only it and the grader share); every process it starts dies with it;
- a read-only file system of /usr, the few files of /etc a Python kernel needs, the Python
  environment, the course package and its datasets; sized tmpfs for /tmp, /dev/shm and the home that
  receives a copy of this one submission's files (grader.intake.safe_copy: links, devices and FIFOs never
  followed); nothing of solutions/, grader/, tests/, the gradebook, the workspace or other students;
- its own cgroups (grader.sandbox.cgroups): memory (tmpfs included), processes, cores, and CPU time used;
- a system-call filter (grader.sandbox.seccomp): bpf, perf events, io_uring, the keyring, ptrace, mounts and the
  like fail with EPERM;
- its stdout and stderr through a pipe of which at most `stderr_kb` reach the log.

Its private folder lives on a tmpfs (/dev/shm): the one folder the kernel can write outside its own
tmpfs is where its sockets are, and what it writes there is charged to its memory cgroup.

The private folder and the cgroups are removed when the kernel is shut down, when the manager is
collected, or, after a crash of the grader itself, by the next kernel that starts on this machine.
"""
import asyncio
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, DottedObjectName, Instance, List, Type, Unicode, default

import attention_course
from attention_course.paths import DATA_VARIABLE, datasets_dir
from grader.sandbox import cgroups, seccomp, zygote
from grader.limits import FIXED, GradingLimits
from grader.intake.safe_copy import copy_tree

SANDBOX_UID = 65534
HOME = "/home/student"
SUBMISSION = "/submission"  # the staged copy, read-only; the kernel's start copies it into its home
HOME_SEED = "/home-seed"  # files the home starts with (matplotlib's font list), read-only
BOX_PREFIX = "crs-"  # short: ipc socket paths are limited to ~100 bytes
COPIED = "copied"  # the file in a kernel's run folder that says its submission is in place
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap)"
# Thread pools sized by these: OpenMP/BLAS in NumPy, TensorFlow's intra- and inter-op pools.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                    "TF_NUM_INTEROP_THREADS")
# Variables a grading kernel may see; everything else of the grader's environment stays out.
PASSED_VARIABLES = ("LANG", "LC_ALL", "TZ", "MPLBACKEND", "NBGRADER_EXECUTION", "OPENBLAS_CORETYPE",
                    "OPENBLAS_L2_SIZE", "TF_CPP_MIN_LOG_LEVEL", *THREAD_VARIABLES)
# Of /etc, only what the dynamic linker, the C library and Python's start-up read; passwd, group and
# hosts are written for the sandbox (grader.sandbox.bubblewrap._etc_files), so no account of the host shows.
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "fonts", "mime.types",
             "os-release")


def course_package_dirs() -> list:
    """The course package and its data, which every notebook imports and reads."""
    return [Path(attention_course.__file__).resolve().parent, datasets_dir().resolve()]


def python_dirs() -> list:
    """The Python installation and the environment (a venv) built on it."""
    return sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()})


def kernel_python() -> Path:
    """This environment's Python by its resolved folder: the path inside the sandbox is the path outside
    only for folders the sandbox binds, never through a link (a venv reached through a symlink)."""
    return Path(sys.prefix).resolve() / "bin" / Path(sys.executable).name


def drops_privileges() -> bool:
    """A grader running as root runs its kernels as the unprivileged `kernel_uid`."""
    return os.geteuid() == 0


@functools.lru_cache(maxsize=None)
def sandbox_problem() -> str:
    """Why no sandbox can be made here ('' when one can), as one line for the instructor."""
    if shutil.which("bwrap") is None:
        return f"bubblewrap is not installed: {INSTALL_HINT}"
    try:
        seccomp.denied_here()
    except seccomp.SeccompUnavailable as error:
        return f"no system-call filter can be made: {error}"
    if drops_privileges():
        grant_traverse(python_dirs() + course_package_dirs())
    probe = subprocess.run([*_as_kernel_user(GradingLimits().kernel_uid), "bwrap", "--unshare-all",
                            "--unshare-user", "--disable-userns", "--die-with-parent",
                            "--uid", str(SANDBOX_UID),
                            "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return (f"bubblewrap cannot make a sandbox on this machine ({reason}); "
                "see docs/security.md, 'Grading without bubblewrap'")
    return ""


def grant_traverse(folders):
    """Let the kernel's unprivileged user reach the folders it reads (o+x on their parents: no listing),
    as the classroom does for a Python under /root; say so once per folder changed."""
    for folder in folders:
        for parent in reversed(Path(folder).parents):
            mode = parent.stat().st_mode
            if not mode & 0o001:
                os.chmod(parent, mode | 0o001)
                print(f"grader: gave {parent} traverse permission (o+x) so that grading kernels, which run "
                      "as an unprivileged user, can reach the Python environment and the course package",
                      file=sys.stderr)


def _as_kernel_user(uid: int) -> list:
    if not drops_privileges():
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def _system_binds(etc: Path) -> list:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in ETC_FILES:
        if os.path.exists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for written in sorted(etc.iterdir()):
        args += ["--ro-bind", str(written), f"/etc/{written.name}"]
    return args


def _etc_files(folder: Path):
    """The sandbox's own passwd, group and hosts: one student account, no host accounts."""
    folder.mkdir()
    (folder / "passwd").write_text(f"root:x:0:0::/:/usr/sbin/nologin\n"
                                   f"student:x:{SANDBOX_UID}:{SANDBOX_UID}::{HOME}:/bin/sh\n")
    (folder / "group").write_text(f"root:x:0:\nstudent:x:{SANDBOX_UID}:\n")
    (folder / "hosts").write_text("127.0.0.1 localhost\n")


def sandbox_environment(environment: dict) -> dict:
    """A kernel's environment in its sandbox: the variables it was offered, its home and its PATH."""
    return dict(environment, HOME=HOME, PATH=f"{kernel_python().parent}:/usr/bin:/bin")


def bwrap_command(box: Path, workdir_name: str, kernel_argv: list, environment: dict,
                  limits: GradingLimits) -> list:
    """The bwrap command line that runs `kernel_argv` in the sandbox made of the private folder `box`, under
    the system-call filter bwrap reads from seccomp.FILTER_FD (opened by seccomp.with_filter). With no
    `kernel_argv` the sandbox's process waits instead, for a kernel forked into it (grader.sandbox.zygote), and
    exits with the status it reads on its standard input."""
    work = f"{HOME}/{workdir_name}"
    args = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--seccomp", str(seccomp.FILTER_FD),
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), *_system_binds(box / "etc"),
            "--proc", "/proc", "--dev", "/dev"]
    for folder in ("/tmp", "/dev/shm"):
        args += [*_size(limits.tmp_mb), "--tmpfs", folder]
    args += [*_size(limits.home_mb), "--tmpfs", HOME]
    for folder in python_dirs() + course_package_dirs():
        args += ["--ro-bind", str(folder), str(folder)]
    args += ["--ro-bind", str(box / "stage"), SUBMISSION, "--ro-bind", str(box / "home"), HOME_SEED,
             "--bind", str(box / "run"), str(box / "run"),
             "--remount-ro", "/", "--chdir", HOME, "--clearenv"]
    for name, value in sorted(sandbox_environment(environment).items()):
        args += ["--setenv", name, value]
    # The copy happens inside, as the sandbox's user, into the sized home.
    copy = f'cp -R {HOME_SEED}/. {HOME} && mkdir -p "$1" && cp -R {SUBMISSION}/. "$1" && cd "$1"'
    if kernel_argv:
        return args + ["--", "/bin/sh", "-c", f'{copy} && shift && exec "$@"', "start", work, *kernel_argv]
    wait = f'{copy} && : > "$2" || exit 1; read -r status; exit "${{status:-1}}"'
    return args + ["--", "/bin/sh", "-c", wait, "start", work, str(box / "run" / COPIED)]


def _size(megabytes: int) -> list:
    return ["--size", str(megabytes * 2 ** 20)] if megabytes else []


def _join_groups(procs_files: list) -> list:
    """A shell that writes its pid into each cgroup, then becomes the rest of the command line."""
    script = 'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 97; shift; done; shift; exec "$@"'
    return ["/bin/sh", "-c", script, "join-cgroups", *procs_files, "--"]


def remove_box(box: Path, group):
    """Everything a kernel leaves behind: its processes and cgroups, then its private folder."""
    if group is not None:
        group.remove()
    shutil.rmtree(box, ignore_errors=True)


def boxes_folder() -> Path:
    """Where kernels' private folders go: a tmpfs (/dev/shm) where there is one, so that whatever a kernel
    writes into the one folder it shares with the grader (its sockets' folder) is memory charged to its
    own cgroup, not the host's disk."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return Path(tempfile.gettempdir())


def remove_stale_boxes():
    """Private folders of kernels whose grader died (SIGKILL, OOM) before it could remove them."""
    for box in boxes_folder().glob(f"{BOX_PREFIX}*"):
        try:
            owner_file = box / "owner"
            if owner_file.stat().st_uid != os.geteuid():
                continue
            owner = int(owner_file.read_text())
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(box, ignore_errors=True)
        except (OSError, ValueError):
            continue


def _drain(reader: int, log_path: str, keep_bytes: int):
    """Read the kernel's own output to its end; keep the first `keep_bytes` in the log."""
    log = open(log_path, "ab") if log_path else None
    kept = 0
    try:
        while chunk := os.read(reader, 65536):
            if log is not None and kept < keep_bytes:
                log.write(chunk[:keep_bytes - kept])
                kept += min(len(chunk), keep_bytes - kept)
                if kept >= keep_bytes:
                    log.write(b"\n[the rest of the kernel's output was dropped by the grader]\n")
                    log.flush()
    finally:
        os.close(reader)
        if log is not None:
            log.close()


class GradingKernelManager(AsyncKernelManager):
    """A kernel manager for grading: an unprivileged user, bwrap, cgroups, limits, ipc, a private folder."""

    limits = Instance(GradingLimits, help="The limits of this kernel (default: from the config)")
    log_path = Unicode("", help="File that receives the kernel process's own output, capped").tag(config=True)
    fork_from_zygote = Bool(True, help="Fork each sandboxed kernel from a Python that has ipykernel and the "
                            "notebook's libraries imported (grader.sandbox.zygote), which saves their import in "
                            "every notebook; False starts a new Python in each sandbox").tag(config=True)
    kernel_imports = List(Unicode(), help="Libraries the notebook's setup cell imports, which the zygote imports "
                          "before it forks (the assignment's `[kernel] imports`, grader/authoring/"
                          "assignment_settings.py)")

    @default("limits")
    def _default_limits(self):
        return GradingLimits(config=self.config)

    # Both, as AsyncKernelManager declares them: client() makes its clients with client_factory, which a
    # default for client_class alone would not change.
    client_class = DottedObjectName("grader.sandbox.kernel_client.LimitedKernelClient")
    client_factory = Type(klass="grader.sandbox.kernel_client.LimitedKernelClient")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.transport = "ipc"  # the sandbox has no network; ipc sockets live in the private folder
        self.box = None
        self.group = None
        self._finalizer = None
        self._status_pipe = None

    def client(self, **kwargs):
        made = super().client(**kwargs)
        made.max_message_bytes = self.limits.message_mb * 2 ** 20
        made.max_json_bytes = self.limits.message_json_mb * 2 ** 20
        return made

    async def _async_pre_start_kernel(self, **kw):
        remove_stale_boxes()
        self.box = Path(tempfile.mkdtemp(prefix=BOX_PREFIX, dir=boxes_folder()))
        (self.box / "owner").write_text(str(os.getpid()))
        for part in ("run", "stage", "home"):
            (self.box / part).mkdir()
        _etc_files(self.box / "etc")
        if self.limits.sandbox:
            seccomp.write_filter(self.box / "seccomp.bpf")
        self.group = None
        if self.limits.sandbox and not cgroups.problem():
            cores = self.limits.cpu_cores or max(1, self.limits.threads)
            self.group = cgroups.KernelGroup(self.box.name, self.limits.memory_mb * 2 ** 20,
                                             self.limits.processes, cores)
        self._finalizer = weakref.finalize(self, remove_box, self.box, self.group)
        self.connection_file = str(self.box / "run" / "kernel.json")
        self.ip = str(self.box / "run" / "k")
        # Signals would stop at bwrap; ipykernel takes the interrupt as a message.
        self.kernel_spec.interrupt_mode = "message"
        workdir = Path(kw.get("cwd") or os.getcwd())
        self._workdir_name = workdir.name or "work"
        self.copy_notes = self._stage_submission(workdir)
        self._copy_font_cache()
        offered = {"TF_CPP_MIN_LOG_LEVEL": "3", **os.environ, **(kw.get("env") or {})}
        if self.limits.threads:
            offered.update(dict.fromkeys(THREAD_VARIABLES, str(self.limits.threads)))
        self._kernel_environment = {name: offered[name] for name in PASSED_VARIABLES if name in offered}
        # The data folder as the sandbox binds it: a regular install (the course image) has no datasets/ beside
        # the package, and the notebooks read it through this variable.
        self._kernel_environment[DATA_VARIABLE] = str(datasets_dir().resolve())
        kw["cwd"] = str(self.box / "stage")
        kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **self._kernel_environment}
        reader, writer = os.pipe()
        kw["stdout"] = kw["stderr"] = writer
        self._output_pipe = writer
        self._status_pipe = None
        if self._forks():  # the sandbox's waiting process reads how the forked kernel ended
            kw["stdin"], self._status_pipe = os.pipe()
        threading.Thread(target=_drain, args=(reader, self.log_path, self.limits.stderr_kb * 1024),
                         daemon=True).start()
        command, kw = await super()._async_pre_start_kernel(**kw)
        if self.limits.sandbox and drops_privileges():
            for path in (self.box, self.box / "run", self.connection_file):
                os.chown(path, self.limits.kernel_uid, self.limits.kernel_uid)
        return command, kw

    def _forks(self) -> bool:
        return self.limits.sandbox and self.fork_from_zygote and not zygote.unavailable()

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
            if self._status_pipe is not None:
                try:
                    await self._fork_kernel()
                except (zygote.ZygoteError, OSError) as error:
                    await self._start_instead(error, kw)
        finally:
            os.close(self._output_pipe)  # the kernel holds the write end; the reader sees EOF when it ends
            if self._status_pipe is not None:
                os.close(kw["stdin"])
                os.close(self._status_pipe)

    async def _start_instead(self, error: Exception, kw: dict):
        """A kernel that could not be forked (a setuid bubblewrap, whose namespaces are root's, or a zygote that
        would not start) starts as a new Python in a new sandbox, as this process's later kernels do."""
        zygote.give_up(str(error))
        self.log.warning("grader: grading kernels cannot be forked from the zygote here (%s), so each starts as a "
                         "new Python", error)
        waiting = self.provisioner.process
        waiting.kill()  # bubblewrap: its sandbox dies with it
        waiting.wait()
        await super()._async_launch_kernel(self._command(forked=False), **{k: v for k, v in kw.items() if k != "stdin"})

    async def _fork_kernel(self):
        """Fork the kernel from the zygote into the sandbox just started, once the submission is copied there."""
        process = self.provisioner.process
        copied = self.box / "run" / COPIED
        allowed = FIXED["sandbox_copy_seconds"].value
        deadline = time.monotonic() + allowed
        while not copied.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise zygote.ZygoteError("the sandbox ended before the submission was copied into it"
                                         if process.poll() is not None else
                                         f"the submission was not copied into the sandbox in {allowed} s")
            await asyncio.sleep(0.005)
        environment = sandbox_environment(self._kernel_environment)
        rlimits = {}
        if self.limits.memory_mb:
            rlimits["RLIMIT_AS"] = [self.limits.memory_mb * 2 ** 20] * 2
        if self.limits.cpu_seconds:
            rlimits["RLIMIT_CPU"] = [self.limits.cpu_seconds, self.limits.cpu_seconds + 5]
        workdir = f"{HOME}/{self._workdir_name}"
        request = {"environment": dict(environment, PWD=workdir, OLDPWD=HOME),  # as the sandbox's `cd` leaves them
                   "workdir": workdir, "rlimits": rlimits,
                   "argv": self._kernel_argv, "seccomp": str(self.box / "seccomp.bpf")}
        forker = zygote.zygote_for(str(kernel_python()), environment, _as_kernel_user(self.limits.kernel_uid),
                                   tuple(self.kernel_imports))
        namespaces = zygote.namespace_fds(zygote.innermost_process(process.pid))
        try:
            forked = forker.fork(request, namespaces, self._output_pipe, self._status_pipe)
        finally:
            for fd in namespaces:
                os.close(fd)
        try:
            if self.group is not None:
                self.group.add(forked.pid)
        except OSError:
            forked.abandon()
            raise
        forked.go()

    def _stage_submission(self, workdir: Path) -> list:
        """The submission's files, never through a link (no notebooks: the graded one goes cell by cell)."""
        if not workdir.is_dir() or workdir.is_symlink():
            return []
        limits = self.limits
        return copy_tree(workdir, self.box / "stage", max_file_bytes=limits.home_mb * 2 ** 20,
                         max_total_bytes=limits.home_mb * 2 ** 20, max_files=10_000,
                         skip=lambda path: path.suffix == ".ipynb")

    def _copy_font_cache(self):
        """Matplotlib's font list, so each kernel does not rebuild it (seconds with the CJK fonts)."""
        import matplotlib
        import matplotlib.font_manager  # noqa: F401 (builds the grader's own cache once)
        target = self.box / "home" / ".cache" / "matplotlib"
        target.mkdir(parents=True, exist_ok=True)
        for cache in Path(matplotlib.get_cachedir()).glob("fontlist-*.json"):
            shutil.copy2(cache, target / cache.name)

    def format_kernel_cmd(self, extra_arguments=None):
        self._kernel_argv = [str(kernel_python()), "-m", "ipykernel_launcher", "-f", self.connection_file,
                             *(extra_arguments or [])]
        return self._command(forked=self._forks())

    def _command(self, forked: bool) -> list:
        limits = ["prlimit"]
        if self.limits.memory_mb:
            limits.append(f"--as={self.limits.memory_mb * 2 ** 20}")
        if self.limits.cpu_seconds:
            limits.append(f"--cpu={self.limits.cpu_seconds}:{self.limits.cpu_seconds + 5}")
        joined = _join_groups(self.group.procs_files()) if self.group is not None else []
        if self.limits.sandbox:
            started = [] if forked else self._kernel_argv  # a forked kernel: the sandbox's process waits for it
            return [*joined, *seccomp.with_filter(self.box / "seccomp.bpf", [
                *limits, *_as_kernel_user(self.limits.kernel_uid),
                *bwrap_command(self.box, self._workdir_name, started, self._kernel_environment, self.limits)])]
        return [*joined, *limits, *self._kernel_argv]

    def cpu_seconds_used(self) -> float:
        return self.group.cpu_seconds() if self.group is not None else 0.0

    def out_of_memory(self) -> bool:
        return self.group is not None and self.group.out_of_memory()

    async def _async_cleanup_resources(self, restart: bool = False):
        """After the kernel ended: its cgroups and private folder go with it, on a restart too (the next
        start makes new ones, connection file included), so a dead kernel pins no memory while its
        notebook goes on."""
        await super()._async_cleanup_resources(restart=restart)
        if self._finalizer is not None:
            self._finalizer()  # removes the cgroups and the private folder, once

    # AsyncKernelManager binds cleanup_resources to its base class's coroutine, which nbclient calls for a
    # kernel that died (one it does not shut down): this manager's own, so the sandbox goes then too.
    cleanup_resources = _async_cleanup_resources
