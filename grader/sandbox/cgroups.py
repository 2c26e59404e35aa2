"""A cgroup (v1) per grading kernel: memory with tmpfs included, processes, CPU share, CPU time used.

Each kernel's group is made inside the grader's own group of each controller, so a grader that is
itself limited (a container, a Slurm job) passes its limits on. Only root can make groups; where
that is not possible `problem()` names the limits that go unenforced, and grading says so.
"""
import functools
import os
import signal
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
# What each controller enforces, for the instructor's message when it cannot be used.
ENFORCES = {"memory": "memory with files in /tmp, /dev/shm and the home included",
            "pids": "the number of processes", "cpu": "the cores a kernel may use",
            "cpuacct": "the notebook's CPU budget across kernel restarts"}


def _own_group(controller: str) -> Path:
    """The grader's own group in `controller`'s v1 hierarchy."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return ROOT / controller / path.lstrip("/")
    raise FileNotFoundError(f"no {controller} cgroup")


@functools.lru_cache(maxsize=None)
def problem() -> str:
    """'' when a group can be made for every controller, else which limits cannot be enforced and why."""
    missing = []
    for controller in CONTROLLERS:
        try:
            parent = _own_group(controller)
            probe = parent / f"attention-probe-{os.getpid()}"
            probe.mkdir()
            probe.rmdir()
        except OSError:
            missing.append(controller)
    if not missing:
        return ""
    why = "the grader is not root" if os.geteuid() != 0 else "no writable cgroup v1 hierarchy"
    return (f"cgroups cannot be made here ({why}), so these limits are not enforced: "
            + "; ".join(ENFORCES[c] for c in missing))


class KernelGroup:
    """One kernel's group in each controller, made with its limits; `remove()` kills what is left in it."""

    def __init__(self, name: str, memory_bytes: int, processes: int, cores: int):
        self.paths = {}
        for controller in CONTROLLERS:
            path = _own_group(controller) / name
            path.mkdir(exist_ok=True)
            self.paths[controller] = path
        if memory_bytes:
            self._write("memory", "memory.limit_in_bytes", memory_bytes)
            if (self.paths["memory"] / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
                self._write("memory", "memory.memsw.limit_in_bytes", memory_bytes)
        if processes:
            self._write("pids", "pids.max", processes)
        if cores:
            period = int((self.paths["cpu"] / "cpu.cfs_period_us").read_text())
            self._write("cpu", "cpu.cfs_quota_us", cores * period)

    def _write(self, controller: str, name: str, value):
        (self.paths[controller] / name).write_text(str(value))

    def procs_files(self) -> list:
        """The files a process writes its pid into to join every group (before it starts the kernel)."""
        return [str(path / "cgroup.procs") for path in self.paths.values()]

    def add(self, pid: int):
        """Move a running process into every group (a kernel forked outside them: grader.sandbox.zygote)."""
        for procs in self.procs_files():
            Path(procs).write_text(str(pid))

    def cpu_seconds(self) -> float:
        try:
            return int((self.paths["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        except OSError:
            return 0.0

    def out_of_memory(self) -> bool:
        try:
            memory = self.paths["memory"]
            fields = dict(line.split() for line in (memory / "memory.oom_control").read_text().splitlines())
            return int(fields.get("oom_kill", 0)) > 0 or int((memory / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def pids(self) -> set:
        try:
            return {int(p) for p in (self.paths["pids"] / "cgroup.procs").read_text().split()}
        except OSError:
            return set()

    def remove(self, seconds: float = 10.0):
        """Kill every process still in the group (a detached child, a fork bomb), then remove the group."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        for path in self.paths.values():
            for _ in range(50):  # a group is busy for a moment after its last process is reaped
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
