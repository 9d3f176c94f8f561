# The one CMake tree of the C agents (libcpi2, collectors, enforcer), for the folder Makefiles:
# c-build is the release build the programs run from, c-asan the sanitizer build tests run in.
ASAN_BUILD := $(ROOT)/build/c-asan

.PHONY: c-build c-asan
c-build:
	@cmake -S $(ROOT) -B $(C_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(C_BUILD) -j2

c-asan:
	@cmake -S $(ROOT) -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCPI2_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j2

# clang-format (the root .clang-format) over every C file of libcpi2, collectors, enforcer and
# ibench: c-format rewrites them, c-format-check fails naming the files it would change.
C_FORMAT_FILES = $(shell cd $(ROOT) && git ls-files --cached --others --exclude-standard -- \
	'libcpi2/*.[ch]' 'collectors/*.[ch]' 'enforcer/*.[ch]' 'ibench/*.[ch]')

.PHONY: c-format c-format-check
c-format:
	@cd $(ROOT) && clang-format -i $(C_FORMAT_FILES)

c-format-check:
	@command -v clang-format >/dev/null || { echo "clang-format is missing (make setup installs it)" >&2; exit 1; }
	@cd $(ROOT) && bad=$$(for f in $(C_FORMAT_FILES); do \
		clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "clang-format: these files differ from .clang-format (make -C libcpi2 format):"; \
		echo "$$bad" | sed 's/^/  /'; exit 1; fi; \
	echo "clang-format: $(words $(C_FORMAT_FILES)) C files as .clang-format has them"
