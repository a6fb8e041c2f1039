"""Importing the package stays light (ArviZ, scikit-learn, NumPyro and the engines load when first used) and turns on float64."""
import os
import subprocess
import sys


def run_python(code, env=None):
    """Run ``code`` in a fresh interpreter; its assertion errors fail the test with its stderr."""
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_importing_the_package_and_its_cli_leaves_arviz_unloaded_until_used():
    code = ("import sys, sparsebayes.inference, sparsebayes.models, sparsebayes.comparisons.cli; "
            "assert 'arviz' not in sys.modules, 'arviz imported at package import'; "
            "from sparsebayes.inference.posterior.idata import point_estimate_idata; "
            "idata = point_estimate_idata({'beta': [1.0, 2.0]}, method='test'); "
            "assert 'arviz' in sys.modules and idata.posterior['beta'].shape == (1, 1, 2)")
    run_python(code)


def test_importing_the_subpackages_defers_the_estimators_and_samplers():
    code = ("import sys, sparsebayes, sparsebayes.inference, sparsebayes.models; "
            "heavy = [m for m in ('sklearn', 'numpyro', 'numpyro.infer', 'matplotlib', 'arviz', "
            "'sparsebayes.inference.estimators.typeii_estimators', 'sparsebayes.inference.estimators.adaptive') if m in sys.modules]; "
            "assert not heavy, heavy")
    run_python(code)


def test_every_public_name_and_submodule_is_reachable_as_before():
    import sparsebayes
    import sparsebayes.inference as inference
    import sparsebayes.models as models
    from sparsebayes.inference import RVMRegressor, engines  # noqa: F401  (a name and a subpackage)
    from sparsebayes.inference.engines import typeii  # noqa: F401  (a submodule)
    from sparsebayes.inference.estimators.typeii_estimators import RVMRegressor as defined

    assert RVMRegressor is defined is inference.RVMRegressor
    for package in (inference, models):
        assert set(package.__all__) <= set(dir(package))
        for name in package.__all__:
            assert getattr(package, name) is not None
    assert inference.engines.bound.__name__ == "sparsebayes.inference.engines.bound"  # attribute access loads a submodule
    assert sparsebayes.comparisons.__name__ == "sparsebayes.comparisons"
    for package, name in ((inference, "no_such_name"), (models, "no_such_name"), (sparsebayes, "no_such_name")):
        assert not hasattr(package, name)


def test_importing_the_package_alone_turns_on_float64():
    code = ("import jax; assert not jax.config.jax_enable_x64; import sparsebayes, jax.numpy as jnp; "
            "assert jax.config.jax_enable_x64 and jnp.zeros(1).dtype == jnp.float64")
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    run_python(code, env)


PACKAGES = ("sparsebayes", "sparsebayes.models", "sparsebayes.inference", "sparsebayes.comparisons",
            "sparsebayes.testing")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The ``__init__`` files of the packages above (the top level is ``sparsebayes_ns``).
INITS = [os.path.join(ROOT, d, "__init__.py") for d in ("sparsebayes_ns", "models", "inference", "comparisons",
                                                         os.path.join("sparsebayes_ns", "testing"))]


def test_dir_of_each_package_is_its_all_and_leaks_no_imported_module():
    import importlib

    for package in PACKAGES:
        module = importlib.import_module(package)
        assert dir(module) == sorted(module.__all__), package
        assert len(set(module.__all__)) == len(module.__all__), f"{package}.__all__ lists a name twice"
        for leak in ("importlib", "jax", "os", "sys", "sparsebayes", "lazy_exports", "annotations"):
            assert leak not in dir(module), f"dir({package}) shows {leak!r}"


def test_the_top_level_gathers_every_subpackage_export_as_the_same_object():
    import sparsebayes
    import sparsebayes.comparisons as comparisons
    import sparsebayes.inference as inference
    import sparsebayes.models as models

    gathered = [*models.__all__, *inference.__all__, *comparisons.__all__]
    assert len(set(gathered)) == len(gathered), "two subpackages export the same name"
    assert set(gathered) | {"compare", "default_compilation_cache_dir", "enable_compilation_cache",
                            "models", "inference", "comparisons", "testing"} == set(sparsebayes.__all__)
    for package in (models, inference, comparisons):
        for name in package.__all__:
            assert getattr(sparsebayes, name) is getattr(package, name), name
    assert sparsebayes.compare is comparisons.compare_estimator
    assert sparsebayes.testing.check_hierarchy is sparsebayes.testing.hierarchies.check_hierarchy


def test_every_public_name_is_written_once_across_the_package_init_files():
    # Each __all__ is generated from the package's table of lazy names (never a second, hand-kept
    # list), and the top level reads the subpackages' instead of naming their exports again.
    import ast

    seen = {}
    for path in INITS:
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                assert not isinstance(node.value, (ast.List, ast.Tuple)), f"{path}: __all__ written out by hand"
            if isinstance(node, ast.Dict):
                for key in node.keys:
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        assert key.value not in seen, f"{key.value!r} in {seen.get(key.value)} and {path}"
                        seen[key.value] = path
    import sparsebayes.models

    assert set(sparsebayes.models.__all__) <= set(seen), "models' exports are not its table's keys"


def test_star_import_gives_the_public_names_only():
    namespace = {}
    exec("from sparsebayes import *", namespace)
    import sparsebayes

    assert set(namespace) - {"__builtins__"} == set(sparsebayes.__all__)


def test_importing_the_package_imports_no_subpackage_until_a_name_is_used():
    code = ("import sys, sparsebayes; subpackages = ('models', 'inference', 'comparisons', 'testing'); "
            "loaded = sorted(m for m in sys.modules if m.split('.')[:2][-1] in subpackages and m.startswith('sparsebayes.')); "
            "assert not loaded, loaded; sparsebayes.LaplacePrior; "
            "assert 'sparsebayes.models.priors' in sys.modules and 'sparsebayes.inference' in sys.modules")
    run_python(code)
