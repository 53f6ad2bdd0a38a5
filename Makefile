# The two commands a newcomer needs (see README.md):
#   make book   build the HTML book       make test   run every test
# Both create .venv and install everything they need on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The book and the tests must not reach for a GPU or spread over more cores than CI has.
export CUDA_VISIBLE_DEVICES :=
export PYTHONHASHSEED := 0

.PHONY: book test unit notebooks book-strict browser links browser-deps grade exercises bench clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -e .
	touch $@

## book: build the HTML book into _build/html
book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book: $(abspath _build/html/index.html)"

## test: unit tests, every notebook under nbval, the book with warnings as errors, then the
## built book in a real browser and its links (in this order: the last step reads _build/html)
test: unit notebooks book-strict browser

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

# Debian's Chromium and its driver for the browser tests, and a CJK font so that the
# glossary's Chinese shows in the screenshots. Installed only if missing (root, as on CI).
BROWSER_DEBS := chromium chromium-driver fonts-wqy-microhei
browser-deps:
	@dpkg -s $(BROWSER_DEBS) >/dev/null 2>&1 || { \
	  echo "Installing $(BROWSER_DEBS) with apt-get"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(BROWSER_DEBS); }

## browser: every page of _build/html in headless Chromium (network off) and the link check;
## screenshots go to _build/screenshots/. Builds the book first if it is not built.
browser: $(STAMP) browser-deps
	test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python -m pytest tests/browser -m browser

## links: only the link and anchor check of _build/html (no browser needed)
links: $(STAMP)
	test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python -m pytest tests/browser/test_links.py -m browser

## grade: grade submitted exercise notebooks: make grade SUBMISSIONS=folder [OUT=results]
grade: $(STAMP)
	$(BIN)/python -m grading.grade "$(SUBMISSIONS)" --out "$(or $(OUT),results)"

## exercises: regenerate the exercises from grading/masters/ (otter assign) and re-execute them
exercises: $(STAMP)
	$(BIN)/python -m grading.assign

## bench: time mha against PyTorch (not part of `make test`; prints ratios, writes bench/results.md)
bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf _build .pytest_cache .hypothesis
