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

.PHONY: book book-en book-zh test unit integration notebooks book-strict browser links browser-deps grade export grading-deps exercises solutions bench record clean

# The modules are byte-compiled on every core: pip compiles one file at a time (this install took
# 149 s on 2 cores that way, 54 + 49 s this way). They must all be compiled here: a module left to
# compile on import compiles again in every process that imports it, not once, wherever .pyc
# files are not written: in the grading sandbox (read-only) and on machines that set
# PYTHONDONTWRITEBYTECODE=1, as the developers' and CI's do (transformers, left out for a while,
# cost each of the ten processes of make test that import it 6 s more CPU than compiling it all
# here). A make test with `pip install --no-compile` alone took 4 minutes longer. A file that does
# not compile under this Python (torch ships one for Python 3.12 only) is left out, as pip does.
$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt -e .
	$(BIN)/python -m compileall -qq -j 0 $(VENV)/lib || true
	touch $@

## book: build the HTML book: English into _build/html, Chinese into _build/html/zh.
## The Chinese notebooks are generated first from the English ones + zh/translations/ (zh/README.md).
book: $(STAMP)
	$(BIN)/python zh/zh_edition.py
	$(MAKE) --no-print-directory -j2 --output-sync=target book-en book-zh
	rm -rf _build/html/zh && cp -r _build/zh/_build/html _build/html/zh
	@echo "The book: $(abspath _build/html/index.html) (中文版: $(abspath _build/html/zh/index.html))"

## test: unit tests, every notebook under nbval, the book with warnings as errors, then the
## built book in a real browser and its links (in this order: the last step reads _build/html)
# The system packages come first: a machine without them is told what to install before
# anything else runs. The book is built while the integration tests run: neither keeps both
# cores busy (the tests wait on sandboxes and subprocesses, each edition's build is one process
# with serial stretches), and nothing either writes is read by the other. Their output is
# printed as each finishes (--output-sync).
test: browser-deps grading-deps unit
	$(MAKE) --no-print-directory -j2 --output-sync=target integration book-strict
	$(MAKE) --no-print-directory notebooks
	$(MAKE) --no-print-directory browser

## unit: the specification of mha, fast (tests marked `slow` and `browser` are left out)
unit: $(STAMP)
	$(BIN)/python -m pytest tests -n 2 -m "not browser and not slow"

## integration: the slow tests (subprocesses, fresh venvs, grading of whole notebooks); each test
## file runs on one worker (--dist loadfile), so a file's tests share its expensive fixtures
integration: $(STAMP) grading-deps
	$(BIN)/python -m pytest tests -n 2 --dist loadfile -m "slow and not browser" --durations=10

# --dist loadscope keeps each notebook's cells on one worker, in order. --other-kernels runs
# every notebook under CPU kernels other than those its outputs were recorded with
# (tools/recorded_kernels.json, or plain code for a chapter whose metadata asks for it;
# conftest.py): the machine's own where they differ, else the next set down (AVX2 on an
# AVX-512 machine, plain code on an AVX2 one). The Chinese notebooks are not run again: their
# code is the English code with comments and strings translated, and their stored outputs are
# the English ones, or show the English outputs' values (a page run in Chinese), or are the
# English check output translated (an exercise's checks): tests/test_zh_edition.py proves it
# in `make unit`, so this run checks both editions. --no-loadscope-reorder: the notebooks are
# handed out in the order conftest.py gives them (longest first), not by number of cells.
notebooks: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-current-env \
	  --nbval-sanitize-with tests/nbval_sanitize.cfg \
	  --durations=15 -n 2 --dist loadscope --no-loadscope-reorder --other-kernels \
	  chapters exercises

# The two editions are independent Sphinx builds of one process each: built side by side.
book-en: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going

book-zh: $(STAMP)
	$(BIN)/jupyter-book build zh --path-output _build/zh -W -n --keep-going

# From scratch (Sphinx does not refresh every file of an existing build, e.g. changed CSS).
book-strict: $(STAMP)
	rm -rf _build/html _build/zh
	$(MAKE) --no-print-directory book

# Debian's Chromium and its driver for the browser tests, and a CJK font so that the
# Chinese edition renders. Installed only if missing, and only by root (as on CI); anyone
# else is told the one command to run, before any other step starts.
BROWSER_DEBS := chromium chromium-driver fonts-wqy-microhei
browser-deps:
	@if dpkg -s $(BROWSER_DEBS) >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo ""; \
	  echo "*** The browser tests need Chromium, its WebDriver and a Chinese font: not all installed."; \
	  echo "*** Install them (Debian/Ubuntu) with:"; \
	  echo ""; \
	  echo "    sudo apt-get update && sudo apt-get install -y $(BROWSER_DEBS)"; \
	  echo ""; \
	  echo "*** then run make again. (Elsewhere: any Chromium + matching chromedriver on PATH, or"; \
	  echo "*** set CHROMIUM and CHROMEDRIVER, and run 'make browser BROWSER_DEBS=' to skip this check.)"; \
	  echo ""; \
	  exit 1; \
	fi; \
	echo "Installing $(BROWSER_DEBS) with apt-get"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(BROWSER_DEBS)

## browser: every page of _build/html in headless Chromium (network off) and the link check;
## screenshots go to _build/screenshots/. Builds the book first if it is not built.
browser: $(STAMP) browser-deps
	test -f _build/html/index.html -a -f _build/html/zh/index.html || $(MAKE) book
	$(BIN)/python -m pytest tests/browser -m browser -n 2 --dist loadscope --no-loadscope-reorder

## links: only the link and anchor check of _build/html (no browser needed)
links: $(STAMP)
	test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python -m pytest tests/browser/test_links.py -m browser

## grade: grade submitted exercise notebooks, each in a bubblewrap sandbox:
##        make grade SUBMISSIONS=folder [OUT=results]
## export: each exercise's Gradescope autograder.zip and PrairieLearn external grader (dist/export)
export: $(STAMP)
	$(BIN)/python -m grading.export --out dist/export

grade: $(STAMP) grading-deps
	$(BIN)/python -m grading.grade "$(SUBMISSIONS)" --out "$(or $(OUT),results)"

## grading-deps: bubblewrap (the grading sandbox), installed with apt-get only if missing
grading-deps:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" != 0 ]; then \
	  echo "*** Grading runs each notebook in a bubblewrap sandbox: bwrap is not installed."; \
	  echo "*** Install it (Debian/Ubuntu) with:  sudo apt-get install -y bubblewrap"; \
	  exit 1; \
	else \
	  echo "Installing bubblewrap with apt-get"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap; \
	fi

## exercises: regenerate the exercises from grading/masters/ (otter assign) and re-execute them
exercises: $(STAMP)
	$(BIN)/python -m grading.assign

## record: re-execute every notebook of both editions and store the outputs the book shows
## (one machine, one run, on purpose: tools/record_outputs.py prints the CPU kernels it used)
record: $(STAMP)
	$(BIN)/python tools/record_outputs.py

## solutions: the instructor's solution notebooks, written to _build/solutions/ (never into the book)
solutions: $(STAMP)
	$(BIN)/python -m grading.solutions

## bench: time mha against PyTorch (not part of `make test`; prints ratios, writes bench/results.md)
bench: $(STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/lm.py

clean:
	rm -rf _build .pytest_cache .hypothesis
