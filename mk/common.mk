# Shared variables for every Makefile of the project (included by the root and folder Makefiles).
# Paths are absolute so folder Makefiles can be run with make -C <folder>.
ROOT      := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
STACK_DIR ?= $(ROOT)/.stack
VENV      ?= $(ROOT)/.venv
PY        := $(VENV)/bin/python
PYTEST    := $(VENV)/bin/pytest
C_BUILD   ?= $(ROOT)/build/c
MVN       ?= mvn -B -q -Dstyle.color=never -f $(ROOT)/pom.xml
# Ports and addresses of the local stack (one file; STACK_ENV=other.env to use another).
STACK_ENV ?= $(ROOT)/stack/stack.env
include $(STACK_ENV)
export

# Every folder's tests and benches first install the tier the tests share (stack/setup.sh test:
# pytest, chdb-core, jsonschema, ruff; clang-format, perf), a no-op once done. A folder's own
# test-only tools are its `tools` target. Added here, the rule is nobody's default goal.
_cpi2_default_goal := $(.DEFAULT_GOAL)
.PHONY: setup-test
test bench: setup-test
setup-test:
	@$(ROOT)/stack/setup.sh test
.DEFAULT_GOAL := $(_cpi2_default_goal)
