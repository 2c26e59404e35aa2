"""Start an IPython kernel under the grader's resource limits (used by the grading kernelspec).

COURSE_KERNEL_MEMORY_MB caps the kernel's address space (a memory bomb raises MemoryError);
COURSE_KERNEL_CPU_SECONDS caps its CPU time (past it the kernel is stopped by SIGXCPU).
Limits set here survive exec, so they apply to the kernel and anything it starts.
"""
import os
import resource
import sys


def apply_limits(environ=os.environ):
    memory_mb = int(environ.get("COURSE_KERNEL_MEMORY_MB", "0"))
    cpu_seconds = int(environ.get("COURSE_KERNEL_CPU_SECONDS", "0"))
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if cpu_seconds > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))


if __name__ == "__main__":
    apply_limits()
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *sys.argv[1:]])
