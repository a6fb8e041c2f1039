"""``sparsebayes.enable_compilation_cache``: a second process loads what the first compiled."""
import os
import subprocess
import sys

import sparsebayes

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
    assert used == str(cache) and hits == 0 and misses > 0 and len(os.listdir(cache)) > 0
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
        assert before is None and after == str(tmp_path / value) and (tmp_path / value).is_dir()


def test_without_the_switch_the_cache_setting_is_untouched(tmp_path):
    for value in (None, "0", ""):
        before, after = _switch(value, tmp_path / "unused")
        assert before is None and after is None
    assert not (tmp_path / "unused").exists()
