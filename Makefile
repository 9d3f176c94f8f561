# CPI2: every entry point. `make help` lists the targets.
include mk/common.mk

# Folders with a Makefile of their own, in build/test order. Each has build, test and bench.
MODULES := $(patsubst %/Makefile,%,$(wildcard $(addsuffix /Makefile,schemas python libcpi2 collectors enforcer ibench lab k8s deploy flink-jobs clickhouse grafana cli docker it)))

.DEFAULT_GOAL := help
.PHONY: help setup build test test-unit up down status logs demo lab bench clean

##@ Getting started
help: ## List the targets
	@awk 'BEGIN {FS = ":.*##"} /^##@/ {printf "\n%s\n", substr($$0, 5)} /^[a-zA-Z_-]+:.*##/ {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: ## Install what the project needs (idempotent): apt packages, Python venv, Maven deps, server jars, Telegraf
	@stack/setup.sh

demo: setup build ## Bring up the stack and play a scenario end to end (see README)
	@if [ -x it/demo.sh ]; then it/demo.sh; else echo "demo: it/demo.sh is not there yet" >&2; exit 1; fi

lab: setup build ## Real interference on this machine, detected and capped end to end (lab/README.md; root)
	@$(MAKE) --no-print-directory -C lab lab

##@ Build and test
build: ## Build everything: Java modules, C agents
	@$(MAKE) --no-print-directory -C schemas build
	@for m in $(filter-out schemas,$(MODULES)); do $(MAKE) --no-print-directory -C $$m build || exit 1; done

test: setup build ## Run every test: unit tests, then the tests over the real local stack
	@$(ROOT)/stack/run-tests.sh $(MODULES)

bench: setup build ## Run every benchmark over the local stack and write bench-report/REPORT.md
	@$(ROOT)/stack/run-bench.sh $(MODULES)

clean: ## Remove build outputs (not the stack's state)
	rm -rf build target */target

##@ Local stack (real servers as plain processes, state under .stack/)
up: setup ## Start Kafka, Flink, ClickHouse and Telegraf; wait until each answers
	@stack/up.sh

down: ## Stop exactly the processes `make up` started
	@stack/down.sh

status: ## Show whether each server of the stack is running and answering
	@stack/status.sh

logs: ## Show the last lines of every server's log
	@stack/logs.sh
