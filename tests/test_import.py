"""Importing the package stays light: ArviZ (1.3 s of a 3 s import) loads when first used."""
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
