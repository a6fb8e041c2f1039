"""Session plumbing: JAX's compiled programs are released when too many have piled up.

Every program XLA:CPU compiles keeps about three memory mappings until it is dropped, and a
test session compiles thousands (each estimator check fits on new shapes; one module alone
adds up to 20,000 mappings). Kept for the whole session they passed Linux's default
``vm.max_map_count`` (65,530) at 60 % of the suite, and LLVM aborted mid-compile ("Fatal Python
error: Aborted"). After a module that leaves more than ``MAX_MAPPINGS`` mappings, the caches
are cleared; below that, later modules keep reusing the compiled programs.

One persistent compilation cache serves the session (:func:`sparsebayes.enable_compilation_cache`,
in a temporary directory removed at the end, unless ``JAX_COMPILATION_CACHE_DIR`` names one):
the xdist workers and the notebooks' kernels find its directory in ``JAX_COMPILATION_CACHE_DIR``
(each turns the cache on itself), so a program one of them compiled is loaded, not compiled, by
the others and after the caches above are cleared.

The default suite (``-m 'not slow'``) is compile-bound (XLA's backend took 12 of the 22 s of
``compare('diabetes')`` in its test). Unless ``XLA_FLAGS`` is set, it runs XLA at
``--xla_backend_optimization_level=0``, set before any process starts its backend (the xdist
workers and the notebooks' kernels inherit it): the same HLO and the same IEEE float64
arithmetic, less optimized machine code; the suite took 483 s instead of 731 s on 2 cores. ``-m slow`` runs the code at length and keeps XLA's default.
A test that passed at one level and failed at the other had compared two differently compiled
programs bit for bit where rounding decides (a fit's last step at a gain of 1e-9 against
``tol`` = 1e-9); such a test is wrong on another CPU too, and was mended. Set ``XLA_FLAGS`` (even
to the empty string) to run the tests as users' programs are compiled.
"""
import contextlib
import os
import shutil
import sys
import tempfile

import jax
import pytest

import sparsebayes


MAX_MAPPINGS = 30_000


def _mappings():
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:  # not Linux: no such limit to guard
        return 0


_OWN_CACHE = pytest.StashKey[str]()


def pytest_configure(config):
    if config.getoption("markexpr", "").strip() == "not slow":  # the default suite (see the module docstring)
        os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")
    if not os.environ.get("JAX_COMPILATION_CACHE_DIR"):  # the controller (or the only process)
        os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="sparsebayes-test-jax-cache-")
        config.stash[_OWN_CACHE] = os.environ["JAX_COMPILATION_CACHE_DIR"]
    sparsebayes.enable_compilation_cache(os.environ["JAX_COMPILATION_CACHE_DIR"])


def pytest_unconfigure(config):
    own = config.stash.get(_OWN_CACHE, None)
    if own:
        shutil.rmtree(own, ignore_errors=True)


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    yield
    if _mappings() > MAX_MAPPINGS:
        jax.clear_caches()


@contextlib.contextmanager
def _programs_built():
    """The programs JAX compiles, or loads from the persistent cache, inside the block (a list of
    event names): a program reused from memory adds nothing. Cache loads count too, else a
    program another test (or worker) compiled would pass for one reused."""
    from jax._src import monitoring

    built = []

    def on_duration(name, secs, **kw):
        if name.endswith("backend_compile_duration"):
            built.append(name)

    def on_event(name, **kw):
        if name == "/jax/compilation_cache/cache_hits":
            built.append(name)

    monitoring.register_event_duration_secs_listener(on_duration)
    monitoring.register_event_listener(on_event)
    try:
        yield built
    finally:
        monitoring.unregister_event_duration_listener(on_duration)
        monitoring.unregister_event_listener(on_event)


@pytest.fixture
def programs_built():
    """``with programs_built() as built: ...``; then ``built == []`` if nothing was compiled or
    loaded from the disk cache in the block."""
    return _programs_built


_FIRST_FIT_HARNESS = r"""
import json, logging, re, warnings
import jax

built = []


class Names(logging.Handler):
    def emit(self, record):
        found = re.search(r"Finished XLA compilation of (\S+)", record.getMessage())
        if found:
            built.append(found.group(1))


{setup}
jax.config.update("jax_log_compiles", True)
log = logging.getLogger("jax")
log.addHandler(Names())
log.propagate = False
programs = {{}}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, est, X, y in FITS:
        before = len(built)
        est.fit(X, y)
        programs[name] = built[before:]
print("PROGRAMS " + json.dumps(programs))
"""


@pytest.fixture
def first_fit_programs():
    """``first_fit_programs(setup)``: run ``setup`` (Python source that imports the estimators and
    defines ``FITS``, a list of ``(name, estimator, X, y)``) in a new process without the
    persistent compilation cache, fit each in turn with ``jax_log_compiles`` on, and return
    ``{name: [names of the programs its fit built]}`` (what was imported before counting starts
    is not counted)."""
    import json
    import subprocess
    import sys

    def run(setup):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "SPARSEBAYES_"))}
        done = subprocess.run([sys.executable, "-c", _FIRST_FIT_HARNESS.format(setup=setup)], env=env,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        line = [s for s in done.stdout.splitlines() if s.startswith("PROGRAMS ")][-1]
        return json.loads(line[len("PROGRAMS "):])

    return run
