"""Importing the package stays light (ArviZ, scikit-learn, NumPyro and the engines load when first used) and turns on float64."""
import os
import subprocess
import sys


def test_importing_the_package_and_its_cli_leaves_arviz_unloaded_until_used():
    code = ("import sys, sparsebayes.inference, sparsebayes.models, sparsebayes.comparisons.cli; "
            "assert 'arviz' not in sys.modules, 'arviz imported at package import'; "
            "from sparsebayes.inference.idata import point_estimate_idata; "
            "idata = point_estimate_idata({'beta': [1.0, 2.0]}, method='test'); "
            "assert 'arviz' in sys.modules and idata.posterior['beta'].shape == (1, 1, 2)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_importing_the_subpackages_defers_the_estimators_and_samplers():
    code = ("import sys, sparsebayes, sparsebayes.inference, sparsebayes.models; "
            "heavy = [m for m in ('sklearn', 'numpyro', 'numpyro.infer', 'matplotlib', 'arviz', "
            "'sparsebayes.inference.typeii_estimators', 'sparsebayes.inference.adaptive') if m in sys.modules]; "
            "assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_public_name_and_submodule_is_reachable_as_before():
    import sparsebayes
    import sparsebayes.inference as inference
    import sparsebayes.models as models
    from sparsebayes.inference import RVMRegressor, typeii  # noqa: F401  (a name and a submodule)
    from sparsebayes.inference.typeii_estimators import RVMRegressor as defined

    assert RVMRegressor is defined is inference.RVMRegressor
    for package in (inference, models):
        assert set(package.__all__) <= set(dir(package))
        for name in package.__all__:
            assert getattr(package, name) is not None
    assert inference.bound.__name__ == "sparsebayes.inference.bound"  # attribute access loads a submodule
    assert sparsebayes.comparisons.__name__ == "sparsebayes.comparisons"
    for package, name in ((inference, "no_such_name"), (models, "no_such_name"), (sparsebayes, "no_such_name")):
        assert not hasattr(package, name)


def test_importing_the_package_alone_turns_on_float64():
    code = ("import jax; assert not jax.config.jax_enable_x64; import sparsebayes, jax.numpy as jnp; "
            "assert jax.config.jax_enable_x64 and jnp.zeros(1).dtype == jnp.float64")
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
