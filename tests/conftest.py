"""Session plumbing: JAX's compiled programs are released when too many have piled up.

Every program XLA:CPU compiles keeps about three memory mappings until it is dropped, and a
test session compiles thousands (each estimator check fits on new shapes; one module alone
adds up to 20,000 mappings). Kept for the whole session they passed Linux's default
``vm.max_map_count`` (65,530) at 60 % of the suite, and LLVM aborted mid-compile ("Fatal Python
error: Aborted"). After a module that leaves more than ``MAX_MAPPINGS`` mappings, the caches
are cleared; below that, later modules keep reusing the compiled programs.
"""
import jax
import pytest

MAX_MAPPINGS = 30_000


def _mappings():
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:  # not Linux: no such limit to guard
        return 0


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    yield
    if _mappings() > MAX_MAPPINGS:
        jax.clear_caches()
