"""Fixtures shared by the test modules."""
import pytest

from tests.notebook_kernel import NotebookKernel


@pytest.fixture(scope="session")
def kernels():
    """kernels(assignment): a kernel that ran the solution notebook, started once per test session."""
    started = {}

    def get(assignment):
        if assignment not in started:
            kernel = NotebookKernel(assignment)
            kernel.run_all()
            started[assignment] = kernel
        return started[assignment]

    yield get
    for kernel in started.values():
        kernel.close()
