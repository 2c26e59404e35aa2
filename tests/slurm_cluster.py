"""A single-node Slurm cluster for the tests: Debian's munge and slurm-wlm (munged, slurmctld, slurmd), every
port on loopback, key, state, spool and logs in one temporary folder, and every daemon stopped at the end.
Used by tests/test_slurm_cluster.py, which runs deploy/grading/ on it as docs/deploy.md says.
"""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.browser.lab import free_port

COMMANDS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo")


def problem() -> str:
    """Why no cluster can be made here ('' when one can)."""
    missing = [command for command in COMMANDS if not shutil.which(command)]
    if missing:
        return f"no {', '.join(missing)}: apt-get install slurm-wlm munge"
    if os.geteuid() != 0:
        return "the test cluster's daemons run as root"
    return ""


def _memory_mb() -> int:
    with open("/proc/meminfo") as meminfo:
        total_kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal:"))
    return int(total_kb / 1024 * 0.8)


def _config(root: Path, node: str) -> str:
    return f"""ClusterName=coursetest
SlurmctldHost={node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={root}/munge.socket
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=3600
NodeName={node} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={_memory_mb()} State=UNKNOWN
PartitionName=course Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def _pid(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except (OSError, IndexError):
        return False


class Cluster:
    def __init__(self, env: dict):
        self.env = env  # what reaches the cluster: SLURM_CONF
        self.pids = {}  # daemon -> process id, while it runs

    def alive(self) -> list:
        return [name for name, pid in self.pids.items() if _alive(pid)]


@contextlib.contextmanager
def slurm_cluster(root: Path):
    """Start munged, slurmctld and slurmd under `root`; yield the Cluster; stop every daemon, also when the test
    fails (SIGKILL after 30 s), and wait until their processes are gone (Cluster.alive() is then empty)."""
    root = Path(root)
    for folder in ("state", "spool"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    node = socket.gethostname().split(".")[0]
    (root / "slurm.conf").write_text(_config(root, node))
    cluster = Cluster({**os.environ, "SLURM_CONF": str(root / "slurm.conf")})
    env = cluster.env
    try:
        subprocess.run(["munged", "--force", f"--key-file={key}", f"--socket={root}/munge.socket",
                        f"--pid-file={root}/munged.pid", f"--log-file={root}/munged.log",
                        f"--seed-file={root}/munged.seed"], check=True, capture_output=True, timeout=30)
        subprocess.run(["slurmctld", "-c", "-i"], env=env, check=True, capture_output=True, timeout=60)
        subprocess.run(["slurmd", "-N", node], env=env, check=True, capture_output=True, timeout=60)
        deadline = time.monotonic() + 60
        while "idle" not in subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True,
                                           text=True).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError("the test cluster's node never became idle:\n"
                                   + (root / "slurmctld.log").read_text()[-2000:])
            time.sleep(0.5)
        cluster.pids = {name: _pid(root / f"{name}.pid") for name in ("munged", "slurmctld", "slurmd")}
        yield cluster
    finally:
        subprocess.run(["scontrol", "shutdown"], env=env, capture_output=True, timeout=30)
        subprocess.run(["munged", "--stop", f"--socket={root}/munge.socket"], capture_output=True, timeout=30)
        deadline = time.monotonic() + 30
        for pid in cluster.pids.values():
            while pid and _alive(pid):
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                time.sleep(0.2)
