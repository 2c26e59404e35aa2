"""Grading kernels: one bubblewrap sandbox and cgroup per kernel, its system-call filter, size-limited sockets to it,
and the zygote each kernel is forked from."""
