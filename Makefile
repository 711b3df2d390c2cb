# Two commands do everything on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: setup demo test check lua dist clean

setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

node_modules/.installed: package.json
	npm install --no-audit --no-fund --loglevel=error
	touch $@

# The main job: a references report on the example project, through the embedded Neovim.
demo: setup
	cd examples/shop && ../../$(BIN)/lsap references 'shop/models.py:Product'

check: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# lua/lsap/modes.lua from the mode declarations (a unit test fails while it is stale).
lua: setup
	$(BIN)/python -m lsap_bridge.lua_modes

# The sdist, and the wheel built from it (so a file missing from the sdist breaks the
# wheel too), checked the way PyPI checks an upload.
dist: setup
	rm -rf dist
	$(BIN)/python -m build --quiet --outdir dist .
	$(BIN)/twine check --strict dist/*

test: check dist
	PATH="$(CURDIR)/node_modules/.bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q --durations=25

clean:
	rm -rf $(VENV) node_modules dist
