import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "schemas", "tools"))

import pytest  # noqa: E402

import stack  # noqa: E402


@pytest.fixture(scope="module")
def stack_up():
    """The local stack, found running or started (modules use it with pytestmark)."""
    stack.ensure_up()
    yield
    stack.ensure_up()  # whole again for the next module, whatever this one stopped or killed
