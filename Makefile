# twinlab: the two commands of the README. Both run the idempotent set-up first.
.PHONY: setup demo test test-fast doctor

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test: setup
	bash scripts/test.sh

# without the window, model and R tests (seconds, for editing loops)
test-fast: setup
	bash scripts/test.sh -m "not slow and not gui and not model and not r and not browser and not server and not long"

doctor: setup
	R_LIBS_USER=$(CURDIR)/.rlib xvfb-run -a -s "-screen 0 1280x1024x24" .venv/bin/twinlab doctor
