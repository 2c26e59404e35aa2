"""Grading kernels in a bubblewrap sandbox: the student's code sees its own submission and nothing else.

nbgrader starts each grading kernel through a kernel manager; GradingKernelManager (set by
grader.preprocessors.SandboxedExecute, so the Formgrader's Autograde button uses it too) starts
it under `prlimit` (memory and CPU time) and `bwrap`:

- a user, PID, network, IPC and UTS namespace of its own: uid 65534 without capabilities; no network
  (the grader talks to it over ipc sockets in a folder only it and the grader share); every process
  it starts dies with it;
- a file system made of read-only views of the system (/usr, /etc), the Python environment, the
  course package and its datasets, plus a private writable home holding a copy of this one
  submission's files; nothing of solutions/, grader/, tests/, the gradebook, the grading workspace,
  other students or the repository's history.

The private folder is deleted when the kernel is shut down.
"""
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, Integer, Unicode

import attention_course
from attention_course.paths import datasets_dir

SANDBOX_UID = 65534
HOME = "/home/student"
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap)"
# Thread pools sized by these: OpenMP/BLAS in NumPy, TensorFlow's intra- and inter-op pools.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")
# Variables a grading kernel may see; everything else of the grader's environment stays out.
PASSED_VARIABLES = ("LANG", "LC_ALL", "TZ", "MPLBACKEND", "NBGRADER_EXECUTION", "OPENBLAS_CORETYPE",
                    "OPENBLAS_L2_SIZE", "TF_CPP_MIN_LOG_LEVEL", *THREAD_VARIABLES)


def course_package_dirs() -> list:
    """The course package and its data, which every notebook imports and reads."""
    return [Path(attention_course.__file__).resolve().parent, datasets_dir().resolve()]


def python_dirs() -> list:
    """The Python installation and the environment (a venv) built on it."""
    return sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()})


@functools.lru_cache(maxsize=None)
def sandbox_problem() -> str:
    """Why no sandbox can be made here ('' when one can), as one line for the instructor."""
    if shutil.which("bwrap") is None:
        return f"bubblewrap is not installed: {INSTALL_HINT}"
    probe = subprocess.run(["bwrap", "--unshare-all", "--die-with-parent", "--uid", str(SANDBOX_UID),
                            "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot make a sandbox on this machine ({reason}); see README, 'Grading without bubblewrap'"
    return ""


def _system_binds() -> list:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def bwrap_command(box: Path, workdir_name: str, kernel_argv: list, environment: dict) -> list:
    """The bwrap command line that runs `kernel_argv` in the sandbox rooted at the private folder `box`."""
    work = f"{HOME}/{workdir_name}"
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), *_system_binds(),
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for folder in python_dirs() + course_package_dirs():
        args += ["--ro-bind", str(folder), str(folder)]
    args += ["--bind", str(box / "home"), HOME, "--bind", str(box / "work"), work,
             "--bind", str(box / "run"), str(box / "run"), "--chdir", work, "--clearenv"]
    environment = dict(environment, HOME=HOME, PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    for name, value in sorted(environment.items()):
        args += ["--setenv", name, value]
    return args + ["--", *kernel_argv]


class GradingKernelManager(AsyncKernelManager):
    """A kernel manager for grading: limits, ipc transport, a private folder, and (by default) bwrap."""

    sandbox = Bool(True, help="Run the kernel in a bubblewrap sandbox").tag(config=True)
    memory_mb = Integer(0, help="Address-space limit of the kernel in MB (0 = none)").tag(config=True)
    cpu_seconds = Integer(0, help="CPU-time limit of the kernel in seconds (0 = none)").tag(config=True)
    threads = Integer(0, help="Threads for NumPy and TensorFlow in the kernel (0 = their default)").tag(config=True)
    log_path = Unicode("", help="File that receives the kernel process's own output").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.transport = "ipc"  # the sandbox has no network; ipc sockets live in the private folder
        self.box = None
        self._log = None

    async def _async_pre_start_kernel(self, **kw):
        self.box = Path(tempfile.mkdtemp(prefix="crs-"))  # short: ipc socket paths are limited to ~100 bytes
        for part in ("run", "home", "work"):
            (self.box / part).mkdir()
        self.connection_file = str(self.box / "run" / "kernel.json")
        self.ip = str(self.box / "run" / "k")
        self.kernel_spec.interrupt_mode = "message"  # signals would stop at bwrap; ipykernel handles the message
        workdir = Path(kw.get("cwd") or os.getcwd())
        self._workdir_name = workdir.name or "work"
        self._copy_submission(workdir)
        self._copy_font_cache()
        offered = {"TF_CPP_MIN_LOG_LEVEL": "3", **os.environ, **(kw.get("env") or {})}
        if self.threads:
            offered.update(dict.fromkeys(THREAD_VARIABLES, str(self.threads)))
        self._kernel_environment = {name: offered[name] for name in PASSED_VARIABLES if name in offered}
        kw["cwd"] = str(self.box / "work")
        kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **self._kernel_environment}
        if self.log_path:
            self._log = open(self.log_path, "ab")
            kw["stdout"] = kw["stderr"] = self._log
        return await super()._async_pre_start_kernel(**kw)

    def _copy_submission(self, workdir: Path):
        """The submission's files (not notebooks: the one being graded is sent cell by cell)."""
        if not workdir.is_dir():
            return
        for path in workdir.iterdir():
            if path.suffix == ".ipynb" or path.is_symlink():
                continue
            if path.is_dir():
                shutil.copytree(path, self.box / "work" / path.name, symlinks=False,
                                ignore=lambda folder, names: [n for n in names if os.path.islink(os.path.join(folder, n))])
            elif path.is_file():
                shutil.copy2(path, self.box / "work" / path.name)

    def _copy_font_cache(self):
        """Matplotlib's font list, so each kernel does not rebuild it (seconds with the CJK fonts)."""
        import matplotlib
        import matplotlib.font_manager  # noqa: F401 (builds the grader's own cache once)
        target = self.box / "home" / ".cache" / "matplotlib"
        target.mkdir(parents=True, exist_ok=True)
        for cache in Path(matplotlib.get_cachedir()).glob("fontlist-*.json"):
            shutil.copy2(cache, target / cache.name)

    def format_kernel_cmd(self, extra_arguments=None):
        kernel_argv = [sys.executable, "-m", "ipykernel_launcher", "-f", self.connection_file, *(extra_arguments or [])]
        limits = ["prlimit"]
        if self.memory_mb:
            limits.append(f"--as={self.memory_mb * 1024 * 1024}")
        if self.cpu_seconds:
            limits.append(f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 5}")
        if self.sandbox:
            return [*limits, *bwrap_command(self.box, self._workdir_name, kernel_argv, self._kernel_environment)]
        return [*limits, *kernel_argv]

    async def _async_cleanup_resources(self, restart: bool = False):
        await super()._async_cleanup_resources(restart=restart)
        if self._log is not None:
            self._log.close()
            self._log = None
        if not restart and self.box is not None:
            shutil.rmtree(self.box, ignore_errors=True)
