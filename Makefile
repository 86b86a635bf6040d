# Margin — build, test and maintenance targets. 'make help' lists them.
SHELL := /bin/bash
SWIFT ?= swift

.PHONY: help deps build release demo test man check-man lint completions fixtures format install clean

help:
	@echo "make demo        install what's missing, build, and run Margin on ./demo-library"
	@echo "make test        install what's missing, build, and run the whole test suite (what CI runs)"
	@echo "make release     build .build/release/margin and margin-full (which margin runs for downloads,"
	@echo "                 team libraries and the reader's server)"
	@echo "make install     install margin and margin-full (stripped; debug information under /usr/lib/debug)"
	@echo "                 into /usr/local/bin, the man page and completions (DESTDIR, PREFIX)"
	@echo "make man         regenerate man/margin.1 from the command definitions"
	@echo "make completions write bash, zsh and fish completions to completions/"
	@echo "make fixtures    regenerate fixtures/pdf/ with fixtures/make-fixtures.py"
	@echo "make format      format the sources with swift format"
	@echo "make lint        check the sources are formatted (swift format lint, .swift-format)"

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build --product margin
	$(SWIFT) build --product margin-full

release: deps
	SWIFT=$(SWIFT) scripts/build-release.sh

demo: release
	@scripts/demo.sh

test:
	@scripts/install-deps.sh --test
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift
	$(SWIFT) build --build-tests
	@# One malloc arena for the test process: Foundation's Process.run() (swift-corelibs-foundation
	@# before its PR 5472) copies 256 bytes from each /proc/self/fd entry readdir returns, past the
	@# end of glibc's buffer; in a thread's arena that buffer can end at an unmapped page (a crash,
	@# about one run in five), in the main arena there is always padding after it.
	@# No team helper (on by default) left running by the commands tests and their scripts run,
	@# unless a test asks for one (TeamHelperTests).
	@MALLOC_ARENA_MAX=1 MARGIN_TEAM_HELPER=0 scripts/with-postgres.sh $(SWIFT) test --skip-build
	@scripts/check-man.sh

man: deps
	$(SWIFT) package --allow-writing-to-package-directory generate-manual --configuration debug --date "$$(cat man/DATE)"
	cp .build/plugins/GenerateManual/outputs/margin/margin.1 man/margin.1

check-man: deps
	@scripts/check-man.sh

completions: release
	mkdir -p completions
	.build/release/margin --generate-completion-script bash > completions/margin.bash
	.build/release/margin --generate-completion-script zsh > completions/_margin
	.build/release/margin --generate-completion-script fish > completions/margin.fish

install: release
	@scripts/install.sh

fixtures:
	python3 fixtures/make-fixtures.py

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

clean:
	rm -rf .build demo-library completions
