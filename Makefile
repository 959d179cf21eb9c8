# The two commands: `make book` and `make test`. Each bootstraps its own virtual
# environment (.venv) with the pinned dependencies, so a fresh clone needs only
# Python >= 3.11, git and make.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.mbcourse-installed
export PATH := $(abspath $(BIN)):$(PATH)
export MPLBACKEND := Agg
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help venv book test clean

help:
	@echo "make book   build the offline textbook site into _build/html (executes every notebook)"
	@echo "make test   run unit, property, cross-formulation and doctests, and nbval on every notebook"
	@echo "make clean  remove build products (keeps .venv)"

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[book,test]"
	@touch $@

venv: $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . --path-output . --all -W -n --keep-going

test: $(STAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf _build
