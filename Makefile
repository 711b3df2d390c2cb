# Two commands do everything on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: setup luacheck demo test test-quick check lua dist release clean

setup: $(VENV)/.installed node_modules/.installed

# luacheck (for `make check`) from Debian's lua-check when it is missing (CI runs as root;
# a fresh machine's package lists may be empty, hence the update).
luacheck:
	@command -v luacheck >/dev/null || apt-get install -y lua-check || \
	  { apt-get update && apt-get install -y lua-check; } || \
	  { echo "make: luacheck is missing: install Debian's lua-check (sudo apt-get install lua-check)" >&2; exit 1; }

# The venv: pip installs uv into it and uv installs the rest, with a newer pip (a fifth of the
# CPU of pip's own resolve and install of .[dev], which test_release.py's clean clone pays
# too; bytecode compiled, as pip does). uv reads no pip.conf: where it fails (an index only
# pip is configured for), pip does it all as before.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet 'uv>=0.5'
	UV_NATIVE_TLS=1 $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode --upgrade-package pip pip -e '.[dev]' || \
	  { $(BIN)/python -m pip install --quiet --upgrade pip && $(BIN)/python -m pip install --quiet -e '.[dev]'; }
	touch $@

node_modules/.installed: package.json
	npm install --no-audit --no-fund --loglevel=error
	touch $@

# The main job: a references report on the example project, through the embedded Neovim.
demo: setup
	cd examples/shop && ../../$(BIN)/lsap references 'shop/models.py:Product'

check: setup luacheck
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	luacheck --no-color -q lua plugin tests/lua
	node scripts/stylua.mjs --check
	$(BIN)/python scripts/lua_structure.py --strict
	$(BIN)/python scripts/code_metrics.py

# lua/lsap/modes.lua from the mode declarations, lua/lsap/shared.lua from pyproject.toml,
# rplugin/ and lsap_bridge/ (a unit test fails while either is stale).
lua: setup
	$(BIN)/python -m lsap_bridge.lua_modes
	$(BIN)/python -m lsap_bridge.lua_shared

# The sdist, and the wheel built from it (so a file missing from the sdist breaks the
# wheel too), checked the way PyPI checks an upload.
dist: setup
	rm -rf dist
	$(BIN)/python -m build --quiet --outdir dist .
	$(BIN)/twine check --strict dist/*

# The quick tier, for every change (<= 90 s after `make setup`): the static checks, then the
# unit tests (logic, the replayed goldens of tests/unit/test_replayed.py, the Lua tests of
# tests/unit/test_lua.py) on 2 xdist workers. No Neovim of the integration tests, no server.
test-quick: check
	$(TEST_ENV) $(BIN)/pytest tests/unit -q -p no:cacheprovider --durations=5 -n 2

# The wheel tests (tests/integration/test_wheel.py) run once: inside test_release.py's `make
# release` on a clean clone, on the archives that clone's `make dist` built (its dist/); the
# runs here leave the file out (TESTS), so `test` builds no archives of its own.
# The suite runs on WORKERS xdist processes (most of it waits on servers, not on the CPU), a
# module sharing a warm bridge on one of them, the longest work first (tests/schedule.py);
# then the few tests marked `serial` (or `alone`), which need the machine without three
# other workers, one at a time; CONTRIBUTING.md says which and why. Timings, floods and
# repetitions are not the suite's: `python -m benchmarks.run --only stress`. Each part lists
# its slowest; both always run, and the target fails if either did.
WORKERS ?= 4
# Bytecode is written (a machine may set PYTHONDONTWRITEBYTECODE): otherwise every daemon and
# host compiles lsap_bridge again, and each collecting process rewrites the test modules'
# asserts again (13 CPU s instead of 5). Each part has a temp dir of its own (`--basetemp`,
# emptied when that part starts): pytest's own numbered dirs keep three runs, so the fourth
# session (the parts, and test_release's inner run) would delete the first's 1.8 GB of
# venvs while the last part runs.
TEST_ENV = PYTHONDONTWRITEBYTECODE= PATH="$(CURDIR)/node_modules/.bin:$(CURDIR)/$(BIN):$$PATH"
TEST_TMP ?= /tmp/lsapt$(shell printf %s "$(CURDIR)" | cksum | cut -d' ' -f1)
TESTS = --ignore=tests/integration/test_wheel.py
# `make check` runs beside the parallel part (its 10 CPU seconds among that part's 900, its
# half minute no longer before it); its output is printed when the parallel part ends, and
# the target fails if it did.
test: setup luacheck
	mkdir -p $(TEST_TMP); status=0; \
	$(MAKE) --no-print-directory check > $(TEST_TMP)/check.log 2>&1 & check=$$!; \
	$(TEST_ENV) $(BIN)/pytest $(TESTS) --basetemp=$(TEST_TMP)/p -q --durations=25 -n $(WORKERS) --dist loadgroup -m 'not serial' || status=$$?; \
	wait $$check || { status=1; echo "make check failed:"; }; cat $(TEST_TMP)/check.log; \
	$(TEST_ENV) $(BIN)/pytest $(TESTS) --basetemp=$(TEST_TMP)/s -q --durations=10 -m serial || status=$$?; \
	exit $$status

# A release candidate: the checks, the archives (twine check --strict), the wheel test on
# those very archives (pip, pipx and uvx installs answering `lsap references` and MCP),
# then the upload command — printed, never run: publishing is a maintainer's step
# (CONTRIBUTING.md, "Releasing"). On 2 xdist workers: the installs wait on downloads more than
# on the CPU (pip caches no index page or wheel a proxy sends without cache headers).
release: check dist
	LSAP_DIST="$(CURDIR)/dist" PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q -n 2 --dist loadgroup tests/integration/test_wheel.py
	@echo "release: checked $$(cd dist && ls | tr '\n' ' ')"
	@echo "release: to publish, after the checklist in CONTRIBUTING.md:"
	@echo "  $(BIN)/twine upload dist/*"

clean:
	rm -rf $(VENV) node_modules dist
