"""`pip install` of the repository (pyproject.toml) into a fresh virtual environment: the `gmb`
command it installs works from outside the checkout, on its own copy of gmbtools.

pip needs PyPI (setuptools for the isolated build, pandas, numpy, matplotlib): without it, as on
a GPU machine with no network, the test is skipped, never failed. pip's cache makes reruns quick.
"""

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import H200_RUN, SCRIPTS, git_commit_all

import gmbtools

REPO = SCRIPTS.parent
# What `pip install REPO` reads (the build backend copies the same). The test installs from a
# copy of them, committed as in a clean clone, and checks the build left nothing in it.
PACKAGE_FILES = ("pyproject.toml", "LICENSE", "scripts/gmbtools", "scripts/packaging")

# The rows of the committed summary.md (results/nvidia-h200/20261122-022717) that the trimmed
# copy under fixtures/runs/h200-baselines keeps: gmb summary must write them again.
COMMITTED_ROWS = (
    "| best read | `read/f32x4/ilp:8/grid:full` | 4685.7 | 97.3 | 0.0 % |",
    "| best write | `write/f32x2/ilp:2/grid:full` | 4689.5 | 97.4 | 0.0 % |",
    "| best copy | `copy/f32x2/ilp:2/grid:full` | 4276.3 | 88.8 | 0.0 % |",
    "| ref/memcpy_d2d | `ref/memcpy_d2d` | 4277.8 | 88.9 | 0.0 % |",
    "| best write | `write/f64/ilp:2/grid:full` | 4689.1 | 97.4 | 0.0 % |",  # ca
)


def index_reachable(timeout: float = 3.0) -> str | None:
    """None when pip's package index answers a TCP connect, else why not."""
    url = urlsplit(os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple")
    host, port = url.hostname or "pypi.org", url.port or (80 if url.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as err:
        return f"{host}:{port} unreachable ({err})"
    return None


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh virtual environment (no system site-packages) with the repository installed."""
    why = index_reachable()
    if why:
        pytest.skip(f"pip install needs PyPI: {why}")
    if importlib.util.find_spec("ensurepip") is None:
        pytest.skip(f"{sys.executable} has no ensurepip, so no venv with pip (python3-venv)")
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    for name in PACKAGE_FILES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    env_dir = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, env=clean_env())
    git_commit_all(source)
    pip = run(env_dir / "bin" / "python", "-m", "pip", "install", "-q", str(source), cwd=root)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return env_dir


def test_pip_install_leaves_nothing_in_the_checkout(venv):
    """Not even ignored files (build/lib, build/bdist.*, *.egg-info): the backend
    (scripts/packaging) builds in a temporary copy."""
    left = subprocess.run(["git", "-C", str(venv.parent / "source"), "status", "--porcelain",
                           "--ignored"], capture_output=True, text=True, check=True).stdout
    assert left == "", f"pip install left files in the checkout:\n{left}"


def clean_env() -> dict[str, str]:
    """The caller's environment without what would let the venv see scripts/gmbtools."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


def run(*command, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], cwd=cwd, env=clean_env(),
                          capture_output=True, text=True, timeout=900)


def test_the_installed_package_is_the_venvs_own(venv, tmp_path):
    proc = run(venv / "bin" / "python", "-c",
               "import gmbtools; print(gmbtools.__file__); print(gmbtools.__version__)",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    where, version = proc.stdout.split()
    assert Path(where).is_relative_to(venv) and "site-packages" in Path(where).parts
    assert version == gmbtools.__version__


def test_every_subpackage_is_installed(venv, tmp_path):
    """Sub-packages (the four layers, gmbtools.present.figures) must ship too, or an installed
    `gmb` cannot import them."""
    packages = sorted(p.parent.relative_to(SCRIPTS).as_posix().replace("/", ".")
                      for p in (SCRIPTS / "gmbtools").rglob("__init__.py"))
    proc = run(venv / "bin" / "python", "-c",
               "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]",
               *packages, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_gmb_help(venv, tmp_path):
    proc = run(venv / "bin" / "gmb", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: gmb ")
    for command in ("run", "summary", "compare", "plot", "report"):
        assert command in proc.stdout


def test_gmb_summary_of_a_fixture_run(venv, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(H200_RUN, folder)
    proc = run(venv / "bin" / "gmb", "summary", folder, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [str(folder / "summary.md")] and proc.stderr == ""
    text = (folder / "summary.md").read_text()
    assert text.startswith("# gmembench summary: NVIDIA H200\n")
    for row in COMMITTED_ROWS:
        assert row in text


def test_gmb_load_uses_pandas_from_the_venv(venv, tmp_path):
    proc = run(venv / "bin" / "gmb", "load", H200_RUN / "default.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "flavors: default" in proc.stdout


def test_gmb_run_outside_a_checkout_is_one_line_error(venv, tmp_path):
    proc = run(venv / "bin" / "gmb", "run", cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gmb: error: "), proc.stderr
