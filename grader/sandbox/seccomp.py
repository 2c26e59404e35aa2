"""The system-call filter of a grading kernel: what a notebook never needs fails with EPERM.

Inside the sandbox the kernel has no capabilities, so mounting or loading a module already fails; the
calls denied here are the ones an unprivileged process may otherwise make and that have a history of
kernel exploits (bpf, perf_event_open, io_uring, the kernel keyring, userfaultfd), the ones that reach
other processes or namespaces (ptrace, process_vm_*, setns, unshare), and the mount, module, clock,
swap and reboot families. Docker's default profile denies them too, except ptrace and process_vm_*
(allowed there on kernels from 4.8); it allows a list and denies the rest, where this filter denies a list. The filter is built with
libseccomp (the library those runtimes use), written once per grader as a BPF program, and handed to
bubblewrap (`--seccomp FD`), which installs it after setting up the namespaces, so it binds the kernel
and every process it starts, and cannot be removed. Calls of another architecture's ABI (i386 system
calls from a 64-bit process) kill the process, libseccomp's default for a foreign architecture.
"""
import ctypes
import ctypes.util
import errno
import functools
import os
from pathlib import Path

DENIED = (
    # kernel attack surface an unprivileged process can otherwise reach
    "bpf", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
    "keyctl", "add_key", "request_key",
    # other processes and namespaces
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "setns", "unshare",
    # mounts and file handles
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at", "quotactl", "quotactl_fd",
    # the machine itself
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon",
    "swapoff", "acct", "syslog", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "iopl", "ioperm", "lookup_dcookie", "vhangup", "uselib",
)
FILTER_FD = 9  # the descriptor bubblewrap reads the program from (grader.sandbox.bubblewrap)

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO = 0x00050000
_NR_SCMP_ERROR = -1  # what seccomp_syscall_resolve_name returns for a name this architecture lacks


class SeccompUnavailable(RuntimeError):
    """libseccomp is missing: grading refuses to start rather than run kernels unfiltered."""


@functools.lru_cache(maxsize=None)
def _libseccomp():
    name = ctypes.util.find_library("seccomp")
    if name is None:
        raise SeccompUnavailable("libseccomp is not installed (Debian/Ubuntu: sudo apt-get install libseccomp2)")
    lib = ctypes.CDLL(name, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def denied_here() -> list:
    """The names of DENIED that this machine's architecture has (e.g. no iopl on arm64)."""
    lib = _libseccomp()
    return [name for name in DENIED if lib.seccomp_syscall_resolve_name(name.encode()) != _NR_SCMP_ERROR]


def write_filter(path: Path) -> Path:
    """Write the BPF program that denies DENIED with EPERM and allows the rest to `path` (read-only)."""
    lib = _libseccomp()
    context = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not context:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        for name in denied_here():
            number = lib.seccomp_syscall_resolve_name(name.encode())
            status = lib.seccomp_rule_add(context, _SCMP_ACT_ERRNO | errno.EPERM, number, 0)
            if status < 0:
                raise SeccompUnavailable(f"seccomp_rule_add({name}) failed: {os.strerror(-status)}")
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        try:
            status = lib.seccomp_export_bpf(context, descriptor)
        finally:
            os.close(descriptor)
        if status < 0:
            raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-status)}")
    finally:
        lib.seccomp_release(context)
    return path


def with_filter(path: Path, command: list) -> list:
    """`command` started with the filter at `path` open as FILTER_FD (for bwrap's --seccomp)."""
    return ["/bin/sh", "-c", f'f=$1; shift; exec "$@" {FILTER_FD}<"$f"', "seccomp-filter", str(path), *command]
