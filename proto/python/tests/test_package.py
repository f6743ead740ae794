"""The package installs from the tree with pip (offline, into a throwaway venv) and works
from its installed form: the sync and asyncio clients against a real daemon."""

import os
import shutil
import subprocess
import tempfile
import unittest

from daemon_fixture import PROBLEM, Daemon  # noqa: E402

TREE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-venv and python3-setuptools


def venv_problem():
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        return "no %s" % SYSTEM_PYTHON
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import venv, setuptools, ensurepip"], capture_output=True)
    if probe.returncode != 0:
        return "%s lacks venv, ensurepip or setuptools (Debian: python3-venv, python3-setuptools)" % SYSTEM_PYTHON
    return None


@unittest.skipIf(PROBLEM or venv_problem(), PROBLEM or venv_problem() or "")
class InstalledPackageTest(unittest.TestCase):
    def test_pip_installs_the_tree_and_the_installed_clients_work(self):
        work = tempfile.mkdtemp(prefix="corral-py-pkg-")
        self.addCleanup(shutil.rmtree, work, True)
        venv = os.path.join(work, "venv")
        # --system-site-packages: setuptools for the build, with no index to ask.
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv], check=True, timeout=120)
        python = os.path.join(venv, "bin", "python")
        # A copy of the package's files: the build writes beside its sources (build/, *.egg-info).
        source = os.path.join(work, "source")
        os.mkdir(source)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(os.path.join(TREE, name), source)
        shutil.copytree(os.path.join(TREE, "corral"), os.path.join(source, "corral"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        pip = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-deps",
                              "--disable-pip-version-check", source], capture_output=True, text=True, timeout=300)
        self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
        daemon = Daemon("corral-py-pkg-daemon-")
        self.addCleanup(daemon.stop)
        # From a directory away from the tree, so only the installed copy can be imported.
        code = ("import asyncio, os, corral, corral.aio\n"
                "assert os.path.exists(os.path.join(os.path.dirname(corral.__file__), 'py.typed'))\n"
                "print(corral.__file__)\n"
                "with corral.Client(%r) as c:\n"
                "    print(c.exec(argv=['/bin/echo', 'sync'])['stdout'], end='')\n"
                "async def main():\n"
                "    async with await corral.AsyncClient.connect(%r) as c:\n"
                "        print((await c.exec(argv=['/bin/echo', 'async']))['stdout'], end='')\n"
                "asyncio.run(main())\n") % (daemon.sock, daemon.sock)
        run = subprocess.run([python, "-c", code], cwd=work, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        where, sync, async_ = run.stdout.splitlines()
        self.assertTrue(where.startswith(venv), where)
        self.assertEqual((sync, async_), ("sync", "async"))


if __name__ == "__main__":
    unittest.main()
