# CPI2: every entry point. `make help` lists the targets, what each installs and how long it takes.
include mk/common.mk

# Folders with a Makefile of their own, in build/test order. Each has build, test and bench; a
# folder whose tests need tools of their own also has `tools` (built once, kept in .stack/).
MODULES := $(patsubst %/Makefile,%,$(wildcard $(addsuffix /Makefile,schemas python libcpi2 collectors enforcer ibench lab k8s deploy flink-jobs clickhouse grafana cli docker it)))
# What `make demo` builds: the programs the demo runs (the C agents, the Flink job, the Python tools).
DEMO_MODULES := schemas python libcpi2 collectors enforcer flink-jobs clickhouse grafana cli

.DEFAULT_GOAL := help
.PHONY: help setup tools build build-demo test up down status logs demo lab bench clean images

##@ Getting started (times: measured on 2 shared cores, README.md "Two commands")
help: ## List the targets
	@awk 'BEGIN {FS = ":.*##"} /^##@/ {printf "\n%s\n", substr($$0, 5)} /^[a-zA-Z_-]+:.*##/ {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

demo: setup build-demo ## setup, build-demo, then the stack and a 300-host simulated fleet end to end, an HTML report
	@it/demo.sh

setup: ## Install what the demo runs: Debian packages, .venv (requirements.txt), Kafka and Flink jars
	@stack/setup.sh

lab: setup build ## Real interference on this machine, detected and capped end to end (lab/README.md; root)
	@$(MAKE) --no-print-directory -C lab lab

##@ Build and test
build-demo: ## Build what the demo runs: the C agents, the Flink job, the Python package
	@for m in $(DEMO_MODULES); do STEP_PREFIX=build stack/step.sh "make -C $$m build" "" \
	  $(MAKE) --no-print-directory -C $$m build || exit 1; done

build: ## Build everything: the demo's programs and every other folder's (k8s identity, compose check, ...)
	@for m in $(MODULES); do STEP_PREFIX=build stack/step.sh "make -C $$m build" "" \
	  $(MAKE) --no-print-directory -C $$m build || exit 1; done

tools: setup-test ## Install every test-only tool now (each folder's test does it when first needed)
	@for m in $(MODULES); do grep -q '^tools:' $$m/Makefile || continue; \
	  $(MAKE) --no-print-directory -C $$m tools || exit 1; done

test: setup build ## Every test: setup-test and each folder's tools first, then every folder's tests over the local stack
	@$(ROOT)/stack/run-tests.sh $(MODULES)

bench: setup build ## Run every benchmark over the local stack and write bench-report/REPORT.md
	@$(ROOT)/stack/run-bench.sh $(MODULES)

images: ## Build every image of the chart and docker-compose.yml with buildah (docker/README.md; root)
	@$(MAKE) --no-print-directory -C docker images

clean: ## Remove build outputs (not the stack's state)
	rm -rf build target */target

##@ Local stack (real servers as plain processes, state under .stack/)
up: setup ## Start Kafka, Flink, ClickHouse (and Telegraf once make test built it); wait until each answers
	@stack/up.sh

down: ## Stop exactly the processes `make up` started
	@stack/down.sh

status: ## Show whether each server of the stack is running and answering
	@stack/status.sh

logs: ## Show the last lines of every server's log
	@stack/logs.sh
