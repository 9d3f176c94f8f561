import pytest

from cpi2.testing import stack


@pytest.fixture(scope="module")
def stack_up():
    """The local stack, found running or started (modules use it with pytestmark)."""
    stack.ensure_up()
    yield
    stack.ensure_up()  # whole again for the next module, whatever this one stopped or killed
