# The two commands a newcomer needs (see README.md):
#   make book   build the HTML book       make test   run every test
# Both create .venv and install everything they need on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The book and the tests must not reach for a GPU or spread over more cores than CI has.
export CUDA_VISIBLE_DEVICES :=
export MPLBACKEND := Agg
export PYTHONHASHSEED := 0

.PHONY: book test unit notebooks book-strict clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -e .
	touch $@

## book: build the HTML book into _build/html
book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book: $(abspath _build/html/index.html)"

## test: unit tests, every notebook under nbval, then the book with warnings as errors
test: unit notebooks book-strict

unit: $(STAMP)
	$(BIN)/python -m pytest tests -n 2 -m "not browser"

# --dist loadscope keeps each notebook's cells on one worker, in order.
notebooks: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-current-env \
	  --nbval-sanitize-with tests/nbval_sanitize.cfg \
	  -n 2 --dist loadscope chapters exercises

book-strict: $(STAMP)
	rm -rf _build/html
	$(BIN)/jupyter-book build . -W -n --keep-going

clean:
	rm -rf _build .pytest_cache .hypothesis
