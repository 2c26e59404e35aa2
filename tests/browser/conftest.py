"""Fixtures for the browser tests: a JupyterLab server per test and a fresh headless Chromium page.

Every test here is marked `browser` and `slow`; without /usr/bin/chromium they skip and say how to
install it (Playwright's own browser download is not used).
"""
import pytest

from tests.browser.lab import CHROMIUM, INSTALL_HINT, JupyterLab, Shots, chromium_page


@pytest.fixture(autouse=True)
def _needs_chromium():
    if not CHROMIUM.exists():
        pytest.skip(INSTALL_HINT)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the Python package playwright is missing: pip install -r requirements.txt")


@pytest.fixture
def start_lab(tmp_path):
    """start_lab(root_dir, config_dir, cwd=None) -> a running JupyterLab; all are stopped after the test."""
    servers = []

    def start(root_dir, config_dir, cwd=None):
        server = JupyterLab(root_dir, config_dir, log_dir=tmp_path, cwd=cwd)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.browser_test_failed = report.failed


@pytest.fixture
def browser_page(request, shots):
    """A page in a fresh headless Chromium (system binary, own profile); screenshot on failure."""
    with chromium_page(request.node.name) as page:
        yield page
        if getattr(request.node, "browser_test_failed", False):
            shots(page, "FAILED")


@pytest.fixture
def shots(request):
    """shots(page_or_element, "step") saves test-artifacts/browser/<test>/NN_step.png."""
    name = request.node.name.replace("[", "-").replace("]", "").replace("/", "_")
    return Shots(name)
