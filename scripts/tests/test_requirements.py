"""scripts/requirements.txt says which commands need which packages: each command it lists as
standard library only runs (or, where it needs a GPU, imports everything it runs) with pandas,
numpy and matplotlib out of reach, and each command it lists under them says so in one line
without them."""

import json
import re
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, GMB, SCRIPTS, assert_one_line_error

REQUIREMENTS = SCRIPTS / "requirements.txt"
RUN = SCRIPTS / "tests" / "fixtures" / "docs" / "run"
PLOTTING = ("pandas", "numpy", "matplotlib")
# Python with the plotting packages unimportable, as on a GPU machine without them.
REFUSE = f"""
import runpy, sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {PLOTTING!r}:
            raise ImportError(f"No module named {{name!r}}")
sys.meta_path.insert(0, Refuse())
sys.path.insert(0, {str(SCRIPTS)!r})
"""
GMB_WITHOUT = REFUSE + f"""
sys.argv = [{str(GMB)!r}, *sys.argv[1:]]
runpy.run_path({str(GMB)!r}, run_name="__main__")
"""
# What the commands that need a GPU or a Slurm job run, imported here instead.
GPU_MODULES = {
    "run": ["gmbtools.commands.run", "gmbtools.commands.node_run", "gmbtools.present.summary"],
    "ncu": ["gmbtools.commands.ncu"],
    "peers": ["gmbtools.commands.peers"],
    "fleet": ["gmbtools.commands.fleet", "gmbtools.commands.fleet_task"],
}


def listed(group: str) -> list[str]:
    """The commands of one `# - GROUP: ...;` entry of requirements.txt's comment."""
    comment = " ".join(line.lstrip("# ") for line in REQUIREMENTS.read_text().splitlines()
                       if line.startswith("#"))
    entry = re.search(rf"- {re.escape(group)}: (.*?)(?:;|$)", comment)
    assert entry, f"scripts/requirements.txt has no '- {group}:' entry"
    return re.findall(r"`([a-z]+)`", entry.group(1))


def without_plotting(*args, cwd=None):
    """`gmb ARGS` without the plotting packages."""
    return subprocess.run([sys.executable, "-c", GMB_WITHOUT, *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def imports_without_plotting(module: str):
    return subprocess.run([sys.executable, "-c", REFUSE + f"import {module}"],
                          capture_output=True, text=True, timeout=120)


def test_the_groups_cover_every_command():
    from gmbtools.commands.cli import COMMANDS, FLEET

    stdlib, plotting = listed("standard library only"), listed("pandas, numpy and matplotlib")
    assert sorted(stdlib + plotting) == sorted([c.name for c in COMMANDS] + [FLEET[0]])


@pytest.fixture
def fleet_folder(tmp_path):
    """A fleet of one task that screened the fixture run."""
    from gmbtools.data import fleet_folder as fleet

    folder = tmp_path / "fleet"
    folder.mkdir()
    fleet.save_manifest(folder, fleet.Manifest(
        created="now", nodes=1, tasks_per_node=1, tasks=1, binary="gmembench", repetitions=1,
        task_timeout_s=60, time_limit="00:05:00", launcher=["sbatch"]))
    doc = json.loads((RUN / "default.json").read_text())
    where = folder / "node0" / "GPU-0"
    where.mkdir(parents=True)
    (where / fleet.SCREEN_JSON).write_text(json.dumps(doc))
    (where / fleet.STATUS).write_text(json.dumps(
        {"host": "node0", "rank": 0, "state": "ok", "gpu_uuid": "GPU-0",
         "gpu_name": doc["context"]["gpu_name"]}))
    return folder


def test_standard_library_commands_run_without_the_plotting_packages(tmp_path, fleet_folder):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    real = {
        "summary": [["summary", str(run)]],
        "compare": [["compare", str(run / "default.json"), str(run / "cg.json")],
                    ["compare", "--flavors", str(run)]],
        "fleet": [["fleet", "report", str(fleet_folder)]],
        "advise": [["advise", str(FIXTURES / "advise" / "probe_source.csv")]],
    }
    for command in listed("standard library only"):
        assert command in real or command in GPU_MODULES, f"{command}: no check here"
        for args in real.get(command, []):
            proc = without_plotting(*args)
            assert proc.returncode == 0, f"gmb {' '.join(args)}: {proc.stderr}"
            assert "Traceback" not in proc.stderr
        for module in GPU_MODULES.get(command, []):
            proc = imports_without_plotting(module)
            assert proc.returncode == 0, f"{command} imports {module}: {proc.stderr}"
    assert "## Model: measured vs predicted" in (run / "summary.md").read_text()
    assert (fleet_folder / "report.md").is_file()


def test_plotting_commands_say_what_they_need_in_one_line(tmp_path):
    shutil.copytree(RUN, tmp_path / "run")
    arguments = {"load": [str(tmp_path / "run")], "plot": [str(tmp_path / "run")],
                 "report": [str(tmp_path / "run")], "pattern": ["i", "--binary", "gmembench"]}
    for command in listed("pandas, numpy and matplotlib"):
        proc = without_plotting(command, *arguments[command], cwd=tmp_path)
        assert_one_line_error(proc, "this command needs pandas and matplotlib")
