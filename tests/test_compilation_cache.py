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
