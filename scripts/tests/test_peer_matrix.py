"""`gmb peers` on made-up nodes of 1, 2 and 8 GPUs: a fake runner stands for the GPUs and
writes Google Benchmark JSON with made-up numbers (GB/s = 100 i + 10 j + a step per variant), so
every cell of the matrix can be traced to the pair and benchmark it came from."""

import gzip
import json
import re
import signal
from datetime import datetime

import pytest
from conftest import assert_one_line_error, gmb
from PIL import Image

from gmbtools.commands import peers as peer_matrix
from gmbtools.errors import GmbError

NOW = datetime(2026, 11, 24, 12, 0, 0)
# Each name's step above the pair's base (GB/s); the best copy variant is f32x4/ilp:4.
STEPS = {
    "peer/copy/f32/ilp:1/dir:pull": 1.0, "peer/copy/f32x4/ilp:4/dir:pull": 5.0,
    "peer/copy/f32/ilp:1/dir:push": 2.0, "peer/copy/f32x4/ilp:4/dir:push": 6.0,
    "peer/copy/f32/ilp:1/dir:both": 3.0, "peer/copy/f32x4/ilp:4/dir:both": 7.0,
    "ref/memcpy_peer/dir:pull": 8.0, "ref/memcpy_peer/dir:push": 8.0,
    "ref/memcpy_peer/dir:both": 9.0,
    "peer/read/f32/ilp:1": 0.5, "peer/read/f32x4/ilp:4": 4.0,
    "peer/write/f32x4/ilp:4": 4.5,
}


def gbs(i, j, name):
    return 100 * i + 10 * j + STEPS[name]


def option(command, name):
    return next(a.split("=", 1)[1] for a in command if a.startswith(f"--{name}="))


class FakeNode(peer_matrix.Runner):
    """N GPUs; `fail` pairs exit 1 without JSON, `errored` pairs have one benchmark that
    errored, `wrong_partner` pairs report another partner in their context; `old_keys`: the
    context as binaries wrote it before the peer keys were named as the flags."""

    def __init__(self, repo, n, fail=(), errored=(), wrong_partner=(), old_keys=False):
        self.repo, self.n, self.old_keys = repo, n, old_keys
        self.fail, self.errored, self.wrong_partner = set(fail), set(errored), set(wrong_partner)
        self.pairs, self.built, self.running = [], False, False
        self.listed = None  # devices(): the list the user gave, or all of them

    def devices(self):
        return self.listed if self.listed is not None else list(range(self.n))

    def build(self):
        self.built = True
        return "build/fake/gmembench"

    def info(self, binary, device):
        if device >= self.n:
            raise GmbError(f"gmembench: error: --device={device}: there are {self.n} CUDA "
                           "devices")
        return {"gpu_slug": "fake-h200", "gpu_name": "Fake H200", "gpu_uuid": f"GPU-{device}"}

    def run(self, command, log):
        assert not self.running  # one pair at a time
        self.running = True
        i, j = int(option(command, "device")), int(option(command, "gmb_peer_partner"))
        self.pairs.append((i, j))
        log.write_text("the table\n")
        self.running = False
        if (i, j) in self.fail:
            return 1, "gmembench: error: peer access from GPU 3 to GPU 5 is not supported"
        assert re.fullmatch(option(command, "benchmark_filter"), "peer/read/f32/ilp:1")
        benchmarks = []
        for name in STEPS:
            entry = {"name": f"{name}/manual_time", "run_name": f"{name}/manual_time",
                     "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                     "threads": 1, "iterations": 10, "real_time": 1.0, "cpu_time": 0.1,
                     "time_unit": "ms", "bytes_per_second": gbs(i, j, name) * 1e9}
            if (i, j) in self.errored and name == "ref/memcpy_peer/dir:both":
                entry.update(error_occurred=True, error_message="verification failed")
            benchmarks.append(entry)
        partner = str((j + 1) % self.n) if (i, j) in self.wrong_partner else str(j)
        out = self.repo / option(command, "benchmark_out")
        context = {"gmb_peer": "only", "gmb_peer_partner": partner,
                   "gmb_peer_partner_source": "--gmb_peer_partner"}
        if self.old_keys:
            context = {"gmb_peer": partner, "gmb_peer_partner": "--gmb_peer_partner",
                       "gmb_peer_scope": "only"}
        out.write_text(json.dumps({"context": context, "benchmarks": benchmarks}))
        return 0, ""


def measure(tmp_path, node, devices="all", **options):
    return peer_matrix.measure(peer_matrix.Options(devices=devices, **options), runner=node,
                               repo=tmp_path, now=NOW)


def md_table(text, title):
    """The cells of a table of matrix.md, row by row, without the row label."""
    section = text.split(f"## {title}\n\n")[1].split("\n\n")[0].splitlines()[2:]
    return [[c.strip() for c in line.strip("|").split("|")][1:] for line in section]


def test_two_gpus_both_pairs_in_every_table(tmp_path, capsys):
    node = FakeNode(tmp_path, 2)
    folder = measure(tmp_path, node)
    assert folder == tmp_path / "results" / "fake-h200" / "20261124-120000-peers"
    assert node.pairs == [(0, 1), (1, 0)]
    assert sorted(p.name for p in folder.iterdir()) == [
        "matrix.json", "matrix.md", "matrix.png", "pair-0-1.json.gz", "pair-0-1.log",
        "pair-1-0.json.gz", "pair-1-0.log", "summary.md"]
    summary = (folder / "summary.md").read_text()
    context = json.loads(gzip.open(folder / "pair-0-1.json.gz", "rt").read())["context"]
    assert f"| git sha | {context.get('git_sha', 'not recorded')} |" in summary
    doc = json.loads((folder / "matrix.json").read_text())
    assert doc["gmb_command"] in summary and doc["pairs"][1]["command"] in summary
    assert "| 1 | " + doc["devices"][1]["uuid"] + " | 0 | 0 |" in summary
    with gzip.open(folder / "pair-1-0.json.gz", "rt") as packed:
        assert json.load(packed)["context"]["gmb_peer_partner"] == "0"

    text = (folder / "matrix.md").read_text()
    pull = gbs(0, 1, "peer/copy/f32x4/ilp:4/dir:pull")  # the best of the two variants
    assert md_table(text, "kernel copy, pull (partner -> this GPU) (GB/s)") == [
        ["-", f"{pull:.1f}"], [f"{gbs(1, 0, 'peer/copy/f32x4/ilp:4/dir:pull'):.1f}", "-"]]
    engine = gbs(0, 1, "ref/memcpy_peer/dir:both")
    assert md_table(text, "copy engine, both ways at once (GB/s)")[0] == ["-", f"{engine:.1f}"]
    both = gbs(0, 1, "peer/copy/f32x4/ilp:4/dir:both")
    assert md_table(text, "kernel / copy engine, both (ratio)")[0] == [
        "-", f"{both / engine:.3f}"]
    assert md_table(text, "kernel read of the partner's memory (GB/s)")[1] == [
        f"{gbs(1, 0, 'peer/read/f32x4/ilp:4'):.1f}", "-"]
    assert "Every pair measured." in text

    doc = json.loads((folder / "matrix.json").read_text())
    cell = doc["pairs"][0]["cells"]["copy_pull"]
    assert cell == {"gbs": pytest.approx(pull), "name": "peer/copy/f32x4/ilp:4/dir:pull"}
    with Image.open(folder / "matrix.png") as image:
        assert image.format == "PNG"
    assert capsys.readouterr().out.rstrip().endswith(str(folder))


def test_files_with_the_old_peer_keys_are_read(tmp_path):
    """Binaries before the peer keys were named as the flags wrote the partner in `gmb_peer`:
    the matrix reads it there, and a wrong partner is still caught."""
    node = FakeNode(tmp_path, 2, old_keys=True, wrong_partner={(1, 0)})
    with pytest.raises(GmbError, match=r"^1 of 2 pairs have no numbers"):
        measure(tmp_path, node)
    text = (tmp_path / "results" / "fake-h200" / "20261124-120000-peers" / "matrix.md").read_text()
    pull = md_table(text, "kernel copy, pull (partner -> this GPU) (GB/s)")
    assert pull[0][1] == f"{gbs(0, 1, 'peer/copy/f32x4/ilp:4/dir:pull'):.1f}"
    assert "the run's partner was '1', not GPU 0" in text


def test_eight_gpus_with_a_failed_pair(tmp_path, capsys):
    node = FakeNode(tmp_path, 8, fail={(3, 5)}, errored={(2, 6)}, wrong_partner={(7, 0)})
    with pytest.raises(GmbError, match=r"^2 of 56 pairs have no numbers \(see .*matrix.md\)$"):
        measure(tmp_path, node)
    assert node.pairs == [(i, j) for i in range(8) for j in range(8) if i != j]
    folder = tmp_path / "results" / "fake-h200" / "20261124-120000-peers"
    text = (folder / "matrix.md").read_text()

    pull = md_table(text, "kernel copy, pull (partner -> this GPU) (GB/s)")
    assert [row[i] for i, row in enumerate(pull)] == ["-"] * 8
    assert pull[3][5] == "failed" and pull[7][0] == "failed"
    numbers = [c for row in pull for c in row if re.fullmatch(r"[0-9.]+", c)]
    assert len(numbers) == 56 - 2
    assert pull[6][2] == f"{gbs(6, 2, 'peer/copy/f32x4/ilp:4/dir:pull'):.1f}"
    assert md_table(text, "copy engine, both ways at once (GB/s)")[2][6] == "error"
    assert md_table(text, "kernel / copy engine, both (ratio)")[2][6] == ""
    assert md_table(text, "kernel / copy engine, pull (ratio)")[2][6] != ""

    assert ("| 3 | 5 | 1 | 0.0 s |  | exited with 1: gmembench: error: peer access from GPU 3 "
            "to GPU 5 is not supported |") in text
    assert "| 7 | 0 | 0 | 0.0 s | pair-7-0.json.gz | the run's partner was '1', not GPU 0 |" \
        in text
    assert "2 of 56 pairs failed." in text
    assert "GPU 3 with partner GPU 5: exited with 1" in capsys.readouterr().err
    assert (folder / "matrix.png").stat().st_size < 300_000


def test_one_gpu_has_no_pair(tmp_path, capsys):
    node = FakeNode(tmp_path, 1)
    assert measure(tmp_path, node) is None
    assert capsys.readouterr().out == "gmb: one GPU (0): no pair to measure; nothing written\n"
    assert not node.built and not (tmp_path / "results").exists()


def test_a_gpu_that_is_not_there_stops_before_any_pair(tmp_path):
    node = FakeNode(tmp_path, 2)
    node.listed = [0, 9]
    with pytest.raises(GmbError, match=r"^gmembench: error: --device=9: there are 2 CUDA"):
        measure(tmp_path, node, devices="0,9")
    assert node.pairs == [] and not (tmp_path / "results").exists()


@pytest.mark.parametrize(("args", "fragment", "status"), [
    (["--devices", "0,0"], "--devices: GPU 0 named twice in '0,0'", 2),
    (["--devices", "1,0,1"], "--devices: GPU 1 named twice", 2),
    (["--devices", "x"], "--devices: 'x' is not 'all' or a list like 0,2", 2),
    (["--benchmark_filter=^peer/"], "--benchmark_filter is set by gmb peers", 2),
    (["--gmb_peer_partner=1"], "--gmb_peer_partner is set by gmb peers", 2),
    (["--bogus"], "unrecognized argument '--bogus'", 2),
])
def test_bad_input_is_one_line(args, fragment, status):
    proc = gmb("peers", *args)
    assert_one_line_error(proc, fragment)
    assert proc.returncode == status


def test_one_listed_gpu_is_one_line_and_success():
    proc = gmb("peers", "--devices", "0")
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == "gmb: one GPU (0): no pair to measure; nothing written\n"


def test_the_filter_selects_the_matrix_benchmarks_only():
    names = [*STEPS, "peer/chase/ws:16384/lanes:1", "peer/copy/f32/off:1/dir:pull",
             "peer/copy/f32/s:8/dir:push", "peer/copy/f32x4/ilp:4/dir:from_all",
             "ref/memcpy_d2d", "read/f32/ilp:1/grid:full"]
    selected = [n for n in names if re.search(peer_matrix.FILTER, n)]
    assert selected == list(STEPS)


def test_a_stop_keeps_the_pairs_measured_before_and_exits_128_plus_n(tmp_path):
    class StoppedAfterFirstPair(FakeNode):
        def run(self, command, log):
            result = super().run(command, log)
            self.stopper.signal = signal.SIGTERM  # as the stop signal's handler records it
            return result

    node = StoppedAfterFirstPair(tmp_path, 3)
    with pytest.raises(GmbError, match="interrupted by SIGTERM") as caught:
        measure(tmp_path, node)
    assert caught.value.exit_code == 128 + signal.SIGTERM
    assert node.pairs == [(0, 1)]
    folder = tmp_path / "results" / "fake-h200" / "20261124-120000-peers"
    saved = json.loads((folder / "matrix.json").read_text())
    errors = [p["error"] for p in saved["pairs"]]
    assert errors[0] is None and errors[1:] == ["not measured: interrupted by SIGTERM"] * 5


def test_a_full_disk_stops_the_pairs_and_keeps_those_measured(tmp_path):
    class DiskFillsAtTheSecondPair(FakeNode):
        def run(self, command, log):
            if len(self.pairs) == 1:
                self.pairs.append((0, 2))
                return 74, "gmembench: error: cannot write 'x' (No space left on device)"
            return super().run(command, log)

    node = DiskFillsAtTheSecondPair(tmp_path, 3)
    with pytest.raises(GmbError, match="pairs measured before") as caught:
        measure(tmp_path, node)
    assert caught.value.exit_code == 74
    assert node.pairs == [(0, 1), (0, 2)]  # no pair tried after the fault
    folder = tmp_path / "results" / "fake-h200" / "20261124-120000-peers"
    saved = json.loads((folder / "matrix.json").read_text())
    errors = [p["error"] for p in saved["pairs"]]
    assert errors[0] is None and errors[1].startswith("exited with 74")
    assert errors[2:] == ["not measured: the folder could not be written"] * 4
