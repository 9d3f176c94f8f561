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
