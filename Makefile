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
# One BLAS thread: the machines have 2 cores, and threaded BLAS on tiny matrices only
# competes with itself (measured: 100x slower dense solves under load).
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1

# The book must work without network (exam computers): MathJax comes from the pip
# package sphinx-mathjax-offline, the ipywidgets embedder (@jupyter-widgets/html-manager
# dist/embed.js + fonts) is vendored in book/_offline/widgets, and every build is
# checked by tools/check_offline.py. `make vendor-widgets` re-fetches the embedder
# with npm (needed only to update it); pin and checksum are here:
HTML_MANAGER        := 1.0.15
HTML_MANAGER_SHA256 := 2b9d65cb7913e1c7d671757a10008b32c9c2448d4429513371e55c07d6107638
WIDGETS_DIR         := book/_offline/widgets
WIDGETS_TMP         := _build/.vendor-widgets

.PHONY: help venv lab book slides vendor-revealjs pdf tex sandbox browser robot-files test bench homework grade clean check-offline vendor-widgets vendor-threejs robots-reference

help:
	@echo "make book   build the offline textbook site into _build/html (executes every notebook)"
	@echo "make lab    open the notebooks in JupyterLab (from .venv; MyST rendered, notebooks trusted)"
	@echo "make test   run unit, property, cross-formulation and doctests, and nbval on every notebook"
	@echo "make pdf    the whole book as one PDF, _build/pdf/book.pdf (LaTeX; installs Debian TeX if missing)"
	@echo "make grade ASSIGNMENT=ch1_graphs [COURSE=dir] [JOBS=2] [DEADLINE=...] [SEED=...] [UNSANDBOXED=1]  grade every submission, sandboxed"
	@echo "make homework  release + autograde the nbgrader homework into _build/homework (grades.csv)"
	@echo "make clean  remove build products (keeps .venv)"
	@echo "make bench  forward-dynamics timings vs Pinocchio and modern_robotics (< 15 min; not in make test)"
	@echo "make check-offline   re-check _build/html for references to the network"
	@echo "make slides  one reveal.js deck per chapter notebook, _build/slides/<page>.html (offline; from the stored outputs)"
	@echo "make vendor-revealjs  re-fetch reveal.js with npm (maintainers only)"
	@echo "make vendor-widgets  re-fetch the ipywidgets embedder with npm (maintainers only)"
	@echo "make robots-reference  recompute Pinocchio's reference dynamics of the shipped URDF robots and of example-robot-data's"

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[book,test,homework]"
	@touch $@

venv: $(STAMP)

# The notebooks as a student opens them: JupyterLab from .venv, with jupyterlab-myst (the
# MyST markup renders, solutions stay folded). The course's own notebooks are trusted first
# (their stored 3D views and animations need their scripts; `make` already runs this
# repository's code), so they show as the book does before any cell is run.
lab: $(STAMP)
	$(BIN)/jupyter trust book/*.ipynb
	$(BIN)/jupyter lab book/

book: $(STAMP) $(WIDGETS_DIR)/embed.js browser
	MBCOURSE_COMPILE_MESSAGE=0 $(BIN)/jupyter-book build . --path-output . --all -W -n --keep-going
	$(BIN)/python tools/check_offline.py _build/html
	$(BIN)/python tools/check_3d.py _build/html

check-offline:
	$(PYTHON) tools/check_offline.py _build/html --links

# Committed to git, so normally present; fetched only when missing (or on request).
$(WIDGETS_DIR)/embed.js:
	@$(MAKE) --no-print-directory vendor-widgets

vendor-widgets:
	@command -v npm >/dev/null 2>&1 || { \
	  echo "error: $(WIDGETS_DIR)/embed.js is missing and npm is not installed." >&2; \
	  echo "  Restore the vendored files with 'git checkout -- $(WIDGETS_DIR)', or install" >&2; \
	  echo "  Node.js/npm to fetch @jupyter-widgets/html-manager@$(HTML_MANAGER)." >&2; exit 1; }
	rm -rf $(WIDGETS_TMP) && mkdir -p $(WIDGETS_TMP)
	cd $(WIDGETS_TMP) && npm pack --silent @jupyter-widgets/html-manager@$(HTML_MANAGER) >/dev/null
	$(PYTHON) -c "import hashlib, sys; p = '$(WIDGETS_TMP)/jupyter-widgets-html-manager-$(HTML_MANAGER).tgz'; \
	  h = hashlib.sha256(open(p, 'rb').read()).hexdigest(); \
	  sys.exit(0 if h == '$(HTML_MANAGER_SHA256)' else f'checksum mismatch for {p}: {h}')"
	tar -xzf $(WIDGETS_TMP)/jupyter-widgets-html-manager-$(HTML_MANAGER).tgz -C $(WIDGETS_TMP)
	mkdir -p $(WIDGETS_DIR)
	cd $(WIDGETS_TMP)/package/dist && cp embed.js embed.js.LICENSE.txt *.woff2 *.woff $(CURDIR)/$(WIDGETS_DIR)/
	rm -rf $(WIDGETS_TMP)

# three.js for the offline 3D viewer (mbcourse/viz3d.py inlines it into each view's HTML).
# 0.185.1 is the last release that ships minified ES-module builds; only the two build
# files, OrbitControls, the mesh loaders (STL, OBJ, COLLADA) and the license are kept.
THREEJS             := 0.185.1
THREEJS_SHA256      := a2143f5bf978bd3470a51024b2b6bdd581913ba8f36ff1538d433f3a95adf2df
THREEJS_DIR         := mbcourse/_vendor/threejs
THREEJS_TMP         := _build/.vendor-threejs

vendor-threejs:
	@command -v npm >/dev/null 2>&1 || { \
	  echo "error: npm is not installed; restore the vendored files with" >&2; \
	  echo "  'git checkout -- $(THREEJS_DIR)' or install Node.js/npm to fetch three@$(THREEJS)." >&2; exit 1; }
	rm -rf $(THREEJS_TMP) && mkdir -p $(THREEJS_TMP)
	cd $(THREEJS_TMP) && npm pack --silent three@$(THREEJS) >/dev/null
	$(PYTHON) -c "import hashlib, sys; p = '$(THREEJS_TMP)/three-$(THREEJS).tgz'; \
	  h = hashlib.sha256(open(p, 'rb').read()).hexdigest(); \
	  sys.exit(0 if h == '$(THREEJS_SHA256)' else f'checksum mismatch for {p}: {h}')"
	tar -xzf $(THREEJS_TMP)/three-$(THREEJS).tgz -C $(THREEJS_TMP)
	mkdir -p $(THREEJS_DIR)
	cd $(THREEJS_TMP)/package && cp LICENSE build/three.core.min.js build/three.module.min.js \
	  examples/jsm/controls/OrbitControls.js examples/jsm/loaders/STLLoader.js \
	  examples/jsm/loaders/OBJLoader.js examples/jsm/loaders/TGALoader.js \
	  examples/jsm/loaders/ColladaLoader.js examples/jsm/loaders/collada/ColladaParser.js \
	  examples/jsm/loaders/collada/ColladaComposer.js $(CURDIR)/$(THREEJS_DIR)/
	printf 'three@%s (npm) tarball sha256 %s\n' $(THREEJS) $(THREEJS_SHA256) > $(THREEJS_DIR)/VERSION
	rm -rf $(THREEJS_TMP)

# reveal.js for the decks: only what a deck loads is kept (the script, its CSS, the white
# theme with the woff files of the font it imports, the speaker-notes plugin, the license).
REVEALJS            := 5.2.1
REVEALJS_SHA256     := 359b575dd51bbda32f89b2fd4c7dc46ad7389a805572158916c29252f7a27333
REVEALJS_DIR        := book/_offline/reveal
REVEALJS_TMP        := _build/.vendor-revealjs
REVEALJS_FILES      := LICENSE dist/reveal.js dist/reveal.css dist/theme/white.css \
                       dist/theme/fonts/source-sans-pro/source-sans-pro.css \
                       dist/theme/fonts/source-sans-pro/LICENSE \
                       dist/theme/fonts/source-sans-pro/source-sans-pro-regular.woff \
                       dist/theme/fonts/source-sans-pro/source-sans-pro-italic.woff \
                       dist/theme/fonts/source-sans-pro/source-sans-pro-semibold.woff \
                       dist/theme/fonts/source-sans-pro/source-sans-pro-semibolditalic.woff \
                       plugin/notes/notes.js

# Committed to git, so normally present; fetched only when missing (or on request).
$(REVEALJS_DIR)/dist/reveal.js:
	@$(MAKE) --no-print-directory vendor-revealjs

vendor-revealjs:
	@command -v npm >/dev/null 2>&1 || { \
	  echo "error: npm is not installed; restore the vendored files with" >&2; \
	  echo "  'git checkout -- $(REVEALJS_DIR)' or install Node.js/npm to fetch reveal.js@$(REVEALJS)." >&2; exit 1; }
	rm -rf $(REVEALJS_TMP) && mkdir -p $(REVEALJS_TMP)
	cd $(REVEALJS_TMP) && npm pack --silent reveal.js@$(REVEALJS) >/dev/null
	$(PYTHON) -c "import hashlib, sys; p = '$(REVEALJS_TMP)/reveal.js-$(REVEALJS).tgz'; \
	  h = hashlib.sha256(open(p, 'rb').read()).hexdigest(); \
	  sys.exit(0 if h == '$(REVEALJS_SHA256)' else f'checksum mismatch for {p}: {h}')"
	tar -xzf $(REVEALJS_TMP)/reveal.js-$(REVEALJS).tgz -C $(REVEALJS_TMP)
	rm -rf $(REVEALJS_DIR)/dist $(REVEALJS_DIR)/plugin && mkdir -p $(REVEALJS_DIR)
	cd $(REVEALJS_TMP)/package && cp --parents $(REVEALJS_FILES) $(CURDIR)/$(REVEALJS_DIR)/
	chmod -R a-x,a+rX,u+w $(REVEALJS_DIR)
	printf 'reveal.js@%s (npm) tarball sha256 %s\n' $(REVEALJS) $(REVEALJS_SHA256) > $(REVEALJS_DIR)/VERSION
	rm -rf $(REVEALJS_TMP)

# Lecture slides: one reveal.js deck per chapter page, _build/slides/<page>.html, exported by
# nbconvert from the notebooks as stored in git (executed and tested by nbval, so a deck
# never differs from the page). Which cells appear is the cells' slideshow metadata; cells
# without it are left out (tools/slides_template/README.md). Offline like the book: reveal.js
# from book/_offline/reveal, MathJax 3 from sphinx-mathjax-offline, widgets from
# book/_offline/widgets. The decks are checked for network references and, in headless
# Chromium, for overflowing slides, 3D views that do not draw and math left untypeset.
SLIDES_DIR          := _build/slides
SLIDES_MIN          ?= 20
SLIDES_MAX          ?= 40

slides: $(STAMP) $(WIDGETS_DIR)/embed.js $(REVEALJS_DIR)/dist/reveal.js browser
	$(BIN)/python tools/slides.py --out $(SLIDES_DIR)
	$(BIN)/python tools/check_offline.py $(SLIDES_DIR)
	$(BIN)/python tools/check_slides.py $(SLIDES_DIR) --min-slides $(SLIDES_MIN) --max-slides $(SLIDES_MAX)

# the suite on every core (pytest-xdist), one test file per worker: nbval's cells of a
# notebook share one kernel, and the homework pipeline's fixtures are per file
TEST_WORKERS ?= auto

test: $(STAMP) sandbox browser robot-files
	MBCOURSE_COMPILE_MESSAGE=0 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The URDF files of example-robot-data (tests/test_robot_files.py checks every one against
# Pinocchio's stored answers): the files alone, without Pinocchio (--no-deps; 109 MB wheel).
EXAMPLE_ROBOT_DATA := 4.3.0
robot-files: $(STAMP)
	@$(BIN)/python -c "import importlib.metadata as m; m.distribution('example-robot-data')" \
	  2>/dev/null || $(BIN)/python -m pip install --quiet --no-deps \
	  example-robot-data==$(EXAMPLE_ROBOT_DATA)

# The homework grader runs students' code in a bubblewrap sandbox (homework/grader.py).
# Debian's package; installed here when missing and we are root, else a warning.
sandbox:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  apt-get install -y --no-install-recommends bubblewrap >/dev/null; \
	else \
	  echo "warning: bubblewrap (bwrap) is missing: make grade refuses to grade (UNSANDBOXED=1 overrides)" >&2; \
	  echo "  and the attack tests are skipped. Debian/Ubuntu: apt-get install bubblewrap" >&2; fi

# A headless browser for the 3D views' checks (tools/check_3d.py after `make book`, and
# tests/test_viz3d.py): Debian's chromium, installed when missing and we are root.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	    || command -v google-chrome >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || \
	  { apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null; }; \
	else \
	  echo "warning: no chromium: the 3D views of the site are not checked in a browser." >&2; \
	  echo "  Debian/Ubuntu: apt-get install chromium" >&2; fi

# Benchmarks (benchmarks/README.md): installs the bench extra (Pinocchio, modern_robotics,
# example-robot-data) into .venv, then writes benchmarks/results/{forward_dynamics.csv,.png,
# summary.md}, simulations.md and robots.{csv,md} (real robots, fixed and floating base).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[bench]"
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)
	$(BIN)/python benchmarks/simulate.py
	$(BIN)/python benchmarks/robots.py

# Pinocchio's dynamics of the shipped URDF robots (tests/data/robots_pinocchio.npz), the
# independent reference tests/test_urdf.py compares every formulation against.
robots-reference: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[bench]"
	$(BIN)/python benchmarks/robots_reference.py
	$(BIN)/python benchmarks/robot_files_reference.py

# Homework (README.md, "For instructors: homework"): nbgrader
# releases every assignment into _build/homework/release/, autogrades three synthetic
# submissions (reference, blank, faulty) and every attack of homework/attacks.py between
# honest submissions, exports _build/homework/grades.csv and fails unless reference = full
# marks, blank = faulty = 0 and each attack gets what it should.
homework: $(STAMP) sandbox
	$(BIN)/python homework/pipeline.py

# Grade the submissions of one assignment of a course directory (nbgrader layout:
# COURSE/source/A/A.ipynb, COURSE/submitted/<student>/A/A.ipynb), in the sandbox.
grade: $(STAMP) sandbox
	@test -n "$(ASSIGNMENT)" || { echo "usage: make grade ASSIGNMENT=ch1_graphs [COURSE=dir] [JOBS=2] [DEADLINE=2026-12-01T23:59] [SEED=20261] [UNSANDBOXED=1]" >&2; exit 2; }
	$(if $(SEED),MBCOURSE_TERM_SEED="$(SEED)") $(BIN)/python homework/grader.py $(or $(COURSE),_build/homework) $(ASSIGNMENT) --jobs $(or $(JOBS),2) \
	  $(if $(DEADLINE),--deadline "$(DEADLINE)") $(if $(filter 1 yes true,$(UNSANDBOXED)),--unsandboxed)

# The whole book as one PDF (Jupyter Book's LaTeX builder, XeLaTeX: the bibliography and the
# glossary carry Cyrillic). Not part of `make test`. The TeX packages come from Debian.
TEX_PACKAGES := texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended \
                texlive-xetex texlive-plain-generic latexmk xindy fonts-freefont-otf lmodern
pdf: $(STAMP) tex
	$(BIN)/jupyter-book build . --path-output . --builder pdflatex --all
	mkdir -p _build/pdf && cp _build/latex/book.pdf _build/pdf/book.pdf
	@echo "wrote _build/pdf/book.pdf"

tex:
	@if command -v xelatex >/dev/null 2>&1 && command -v latexmk >/dev/null 2>&1 && command -v xindy >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  apt-get install -y --no-install-recommends $(TEX_PACKAGES); \
	else \
	  echo "error: make pdf needs XeLaTeX and latexmk. On Debian/Ubuntu, as root:" >&2; \
	  echo "  apt-get install -y --no-install-recommends $(TEX_PACKAGES)" >&2; exit 1; fi

clean:
	rm -rf _build
