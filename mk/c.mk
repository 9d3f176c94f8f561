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
