"""``sparsebayes.enable_compilation_cache``: a second process loads what the first compiled, from a
subdirectory keyed by the package's and JAX's versions and the backend, private to the user."""
import os
import subprocess
import sys

import jax
import pytest

import sparsebayes
from sparsebayes import compilation_cache


@pytest.fixture
def restore_cache_setting():
    """Give back the session's cache directory after a test that turns the cache on in-process."""
    before = jax.config.jax_compilation_cache_dir
    yield
    jax.config.update("jax_compilation_cache_dir", before)

PROGRAM = """
import sys
from jax._src import monitoring
import sparsebayes
from sparsebayes.inference import RVMRegressor
import numpy as np

events = []
monitoring.register_event_listener(lambda name, **kw: events.append(name))
used = sparsebayes.enable_compilation_cache(sys.argv[1])
x = np.linspace(-5, 5, 40)[:, None]
RVMRegressor(features="kernel", kernel_width=1.0).fit(x, np.sinc(x[:, 0] / np.pi))
print(used, events.count("/jax/compilation_cache/cache_hits"), events.count("/jax/compilation_cache/cache_misses"))
"""


def _run(directory):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_PERSISTENT_CACHE")}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", PROGRAM, str(directory)], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0], int(out[1]), int(out[2])


def test_a_second_process_loads_the_compiled_programs(tmp_path):
    cache = tmp_path / "jax"
    used, hits, misses = _run(cache)
    assert used == str(cache / compilation_cache.compilation_cache_key())
    assert hits == 0 and misses > 0 and len(os.listdir(used)) > 0
    _, hits_again, misses_again = _run(cache)
    assert hits_again >= misses and misses_again == 0


def test_the_default_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SPARSEBAYES_CACHE_DIR", str(tmp_path / "here"))
    assert sparsebayes.default_compilation_cache_dir() == str(tmp_path / "here")
    monkeypatch.delenv("SPARSEBAYES_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert sparsebayes.default_compilation_cache_dir() == str(tmp_path / "xdg" / "sparsebayes" / "jax")


SWITCH = """
import jax
before = jax.config.jax_compilation_cache_dir
import sparsebayes
print(repr(before), repr(jax.config.jax_compilation_cache_dir))
"""


def _switch(value, cache_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "SPARSEBAYES_"))}
    env["SPARSEBAYES_CACHE_DIR"] = str(cache_dir)
    if value is not None:
        env["SPARSEBAYES_COMPILATION_CACHE"] = value
    done = subprocess.run([sys.executable, "-c", SWITCH], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [eval(s) for s in done.stdout.split()]


def test_the_environment_switch_enables_the_cache_at_import(tmp_path):
    for value in ("1", "on", "TRUE"):
        before, after = _switch(value, tmp_path / value)
        keyed = tmp_path / value / compilation_cache.compilation_cache_key()
        assert before is None and after == str(keyed) and keyed.is_dir()


def test_without_the_switch_the_cache_setting_is_untouched(tmp_path):
    for value in (None, "0", ""):
        before, after = _switch(value, tmp_path / "unused")
        assert before is None and after is None
    assert not (tmp_path / "unused").exists()


def test_the_subdirectory_is_named_by_the_versions_and_the_backend(monkeypatch, tmp_path, restore_cache_setting):
    key = compilation_cache.compilation_cache_key()
    assert key == f"sparsebayes-{sparsebayes.__version__}-jax-{jax.__version__}-{jax.default_backend()}"
    used = sparsebayes.enable_compilation_cache(tmp_path)
    assert used == str(tmp_path / key) and jax.config.jax_compilation_cache_dir == used
    assert oct((tmp_path / key).stat().st_mode & 0o777) == oct(0o700 & ~_umask())
    # called again (no directory: JAX's setting, now the keyed one) or given the keyed directory: no second level
    assert sparsebayes.enable_compilation_cache() == used == sparsebayes.enable_compilation_cache(used)
    # a new version of the package starts its own cache beside the old one
    monkeypatch.setattr(sparsebayes, "__version__", "99.0")
    other = sparsebayes.enable_compilation_cache(tmp_path)
    assert other != used and os.path.dirname(other) == str(tmp_path) and "sparsebayes-99.0-" in other


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owner and mode bits")
def test_a_cache_others_can_write_is_refused(tmp_path, restore_cache_setting):
    before = jax.config.jax_compilation_cache_dir
    keyed = tmp_path / compilation_cache.compilation_cache_key()
    keyed.mkdir()
    keyed.chmod(0o777)
    with pytest.raises(PermissionError, match="writable by others"):
        sparsebayes.enable_compilation_cache(tmp_path)
    assert jax.config.jax_compilation_cache_dir == before  # refused before anything was switched
    keyed.chmod(0o755)
    assert sparsebayes.enable_compilation_cache(tmp_path) == str(keyed)


def test_a_file_in_the_way_is_an_os_error(tmp_path, restore_cache_setting):
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError):
        sparsebayes.enable_compilation_cache(tmp_path / "file")
