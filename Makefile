# One command each: `make lab` (students), `make test` (everything), `make grade` (instructors),
# `make classroom` (the course on a local JupyterHub, as root).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
export JUPYTER_CONFIG_PATH := $(CURDIR)/grader

.PHONY: install lab test test-fast grade release benchmark docs clean classroom classroom-deps

$(INSTALLED): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -e .
	touch $(INSTALLED)

install: $(INSTALLED)

# Courses often run as root in a container; Jupyter refuses root without --allow-root.
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: install  ## open the course in JupyterLab 4: make lab [LAB_ARGS="--port=8890 --no-browser"]
	$(BIN)/jupyter lab notebooks/ $(LAB_ROOT) $(LAB_ARGS)

# Test files run in TEST_WORKERS processes at once (pytest-xdist), each file whole in one of them (its shared
# kernels and graded classes made once), but the per-assignment tests of the largest files are spread
# (tests/conftest.py); most of a test's time is one kernel's single thread.
TEST_WORKERS ?= 2

test: install  ## the whole test suite (what CI runs): make test [TEST_WORKERS=n]
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

test-fast: install  ## everything except whole-notebook runs and nbgrader pipelines on the real notebooks
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder -m "not slow"

grade: install  ## autograde: make grade [SUBMISSIONS=folder] [ASSIGNMENT=name]
	$(BIN)/python -m grader grade $(SUBMISSIONS) $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT))

release: install  ## regenerate notebooks/ from solutions/: make release [ASSIGNMENT=name]
	$(BIN)/python -m grader release $(ASSIGNMENT)

# The classroom's proxy, configurable-http-proxy, pinned in classroom/package-lock.json and installed next to it;
# Node.js and npm come from Debian when missing (as root), bubblewrap too (the Formgrader grades in its sandbox).
PROXY := classroom/node_modules/.bin/configurable-http-proxy
$(PROXY): classroom/package.json classroom/package-lock.json
	@missing=""; command -v npm >/dev/null || missing="nodejs npm"; command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then echo "Installing$$missing (apt-get)"; \
			apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
		else echo "Missing$$missing: sudo apt-get install$$missing" >&2; exit 1; fi; fi
	cd classroom && npm ci --omit=dev --no-audit --no-fund --loglevel=error
	touch $@

classroom-deps: install $(PROXY)

classroom: classroom-deps  ## a local JupyterHub classroom, as root: make classroom [CLASSROOM_ARGS="--students 5 --port 8001"]
	$(BIN)/python -m classroom $(CLASSROOM_ARGS)

docs: install  ## build the manual (docs/, MkDocs, strict) into _site/
	$(BIN)/python -m mkdocs build --strict

benchmark: install  ## print run and grading times for every notebook
	$(BIN)/python -m course_build.benchmark notebooks && $(BIN)/python -m course_build.benchmark grading

clean:
	find _grading -mindepth 1 ! -name .gitkeep -delete 2>/dev/null; rm -rf test-artifacts .pytest_cache _site
