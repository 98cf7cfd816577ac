# Two set-up commands on a fresh machine: `make demo` and `make test`.
# Both create the virtualenv (.venv) and install ragpulse with its dev extras first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench-quality clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

demo: $(VENV)/.installed  ## the main job: embedded broker + traffic + sidecar, /metrics on :9108
	$(BIN)/ragpulse demo $(ARGS)

test: $(VENV)/.installed  ## the whole test suite (starts the real embedded broker itself)
	$(BIN)/pytest $(ARGS)

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench-quality: $(VENV)/.installed  ## detector accuracy on ../shared/datasets
	$(BIN)/python -m bench.quality.xstest_refusal

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
