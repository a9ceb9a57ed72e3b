# emjax: the two commands a newcomer needs are `make demo` and `make test`.
#
#   make demo    run the default built-in scenario; results and figures in out/ (replaced
#                on every run: --overwrite)
#   make test    the test suite on the CPU (pytest, 2 workers)
#   make bench   every benchmark case, JSON records in out/bench.json
#   make lint    ruff
#   make docs    the documentation site in site/ (mkdocs build --strict: warnings fail it)
#   make wheels  wheels in .whl/ for the GPU machine (Python 3.12, x86-64)
#   make clean   outputs, caches, wheels and the site (the virtualenv stays; `make distclean`
#                drops it)
#
# Every target but wheels and clean first makes .venv (python3 -m venv) and installs
# emjax into it, editable, with its test extras; it reinstalls when pyproject.toml
# changes (`make docs` adds the docs extras). PY picks the interpreter:
# `make test PY=python3.12`.

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.stamp
DOCS_STAMP := $(VENV)/.stamp-docs
OUT := out
WHL := .whl

# What the GPU machine lacks (its image has numpy, scipy, h5py, matplotlib, tqdm, rich,
# numba, typing-extensions). pydantic is fetched with its dependencies so that
# pydantic-core is exactly the version it pins.
WHEELS_WITH_DEPS := pydantic
WHEELS_NO_DEPS := tomli-w miepython meshio trimesh networkx gdstk scikit-rf psutil pint \
	flexcache flexparser platformdirs optax absl-py
WHEEL_FLAGS := --only-binary=:all: --python-version 3.12 --implementation cp \
	--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
	--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
	--platform manylinux1_x86_64 --platform any

.PHONY: venv demo test bench lint docs wheels clean distclean

venv: $(STAMP)

# Make the venv if it is missing. Where the venv module has no ensurepip (Debian without
# python3-venv) fall back to a pip-less venv and install pip into it with the system pip.
$(STAMP): pyproject.toml
	@if [ ! -x $(BIN)/python ]; then \
		echo "creating $(VENV) with $(PY)"; \
		$(PY) -m venv $(VENV) || { \
			rm -rf $(VENV) && $(PY) -m venv --without-pip $(VENV) && \
			$(PY) -m pip --python $(BIN)/python install --upgrade pip; \
		} || { echo "could not create $(VENV): install python3-venv (Debian) or set PY=" >&2; \
			exit 1; }; \
	fi
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[test]'
	touch $@

demo: venv
	mkdir -p $(OUT)
	$(BIN)/emjax run --output $(OUT)/demo.h5 --figures $(OUT) --overwrite

test: venv
	JAX_PLATFORMS=cpu $(BIN)/python -m pytest -q -n 2 --dist worksteal tests

bench: venv
	mkdir -p $(OUT)
	$(BIN)/emjax bench all --json > $(OUT)/bench.json.tmp
	mv $(OUT)/bench.json.tmp $(OUT)/bench.json
	@echo "wrote $(OUT)/bench.json"

lint: venv
	$(BIN)/ruff check $(wildcard src tests benchmarks examples)

# The site: docs/ and the pages docs/hooks.py generates (scenario-file reference, command
# line, validation and benchmark tables), API pages from the docstrings.
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -e '.[test,docs]'
	touch $@

docs: $(DOCS_STAMP)
	JAX_PLATFORMS=cpu NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	@echo "the site is in site/ (open site/index.html)"

# Old versions of these packages are removed first: two versions of one package in
# .whl stop the install on the GPU machine. Other files in .whl are left alone.
wheels:
	mkdir -p $(WHL)
	rm -f $(WHL)/pydantic-*.whl $(WHL)/pydantic_core-*.whl $(WHL)/annotated_types-*.whl \
		$(WHL)/typing_inspection-*.whl $(WHL)/typing_extensions-*.whl $(WHL)/tomli_w-*.whl \
		$(WHL)/miepython-*.whl $(WHL)/meshio-*.whl $(WHL)/psutil-*.whl $(WHL)/pint-*.whl \
		$(WHL)/flexcache-*.whl $(WHL)/flexparser-*.whl $(WHL)/platformdirs-*.whl \
		$(WHL)/optax-*.whl $(WHL)/absl_py-*.whl $(WHL)/emjax-*.whl
	$(PY) -m pip download $(WHEEL_FLAGS) -d $(WHL) $(WHEELS_WITH_DEPS)
	$(PY) -m pip download --no-deps $(WHEEL_FLAGS) -d $(WHL) $(WHEELS_NO_DEPS)
	$(PY) -m pip wheel --no-deps -w $(WHL) .
	rm -rf build
	@ls -1 $(WHL)

clean:
	rm -rf $(OUT) $(WHL) site build dist src/*.egg-info .pytest_cache .ruff_cache
	find src tests benchmarks -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
