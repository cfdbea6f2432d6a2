"""The binaries of a run: configuring and building them with CMake, the preset, which GPUs a run
may take, what a binary says of its GPU (`--gmb_info`) and of its benchmarks
(`--benchmark_list_tests`), each benchmark command as recorded, and the new results folder.
Standard library only."""

import json
import os
import re
import shlex
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from gmbtools.commands import stopping
from gmbtools.data import partial
from gmbtools.errors import GmbError

# gpu_slug becomes a directory name: keep it to one plain path component.
SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a gpu_slug: one plain path component


# Variables that decide which GPU `--device=N` is; recorded in front of each command.
DEVICE_ENV = ("CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES")


def benchmark_command(
    binary: str, device: int, repetitions: int, out_json: str, passthrough: tuple[str, ...],
    health_json: str | None = None, progress: str | None = None, part: tuple[str, ...] = (),
) -> list[str]:
    """The exact command line for one flavor (`part`: which of its benchmarks, e.g.
    --gmb_peer=skip); the user's options come last."""
    return [
        binary,
        f"--device={device}",
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_display_aggregates_only=true",
        f"--benchmark_out={out_json}",
        "--benchmark_out_format=json",
        *([f"--gmb_health_out={health_json}"] if health_json else []),
        *([f"--gmb_progress={progress}"] if progress else []),
        *part,
        *passthrough,
    ]


def configure_command(preset: str, cuda_archs: str | None) -> list[str]:
    """`cmake --preset P`, with the user's CUDA architectures instead of the preset's."""
    command = ["cmake", "--preset", preset]
    if cuda_archs:
        command.append(f"-DCMAKE_CUDA_ARCHITECTURES={cuda_archs}")
    return command


def make_run_dir(results_root: Path, slug: str, now: datetime, suffix: str = "") -> Path:
    """Create and return a new `results_root/slug/YYYYmmdd-HHMMSS<suffix>` folder, adding -2,
    -3, ... when that name is taken. mkdir is the existence test, so even two runs started in
    the same second never share (or overwrite) a folder."""
    parent = results_root / slug
    parent.mkdir(parents=True, exist_ok=True)
    stamp = now.strftime("%Y%m%d-%H%M%S") + suffix
    folder, n = parent / stamp, 1
    while True:
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            n += 1
            folder = parent / f"{stamp}-{n}"


def choose_preset(override: str | None) -> str:
    """`release` (native architecture) where nvidia-smi lists a GPU, else `sm90`, which builds
    without one, so the no-GPU path still builds and then stops with the binary's message."""
    if override:
        return override
    try:
        listed = stopping.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "sm90"
    has_gpu = any(line.startswith("GPU ") for line in listed.stdout.splitlines())
    return "release" if has_gpu else "sm90"


def device_env() -> dict[str, str]:
    """The environment the binaries run in. CUDA numbers devices fastest-first by default,
    nvidia-smi by PCI bus: make --device=N and `nvidia-smi -i N` the same GPU unless the user
    chose an order."""
    env = dict(os.environ)
    env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    return env


def resolve_devices(text: str, env: dict[str, str]) -> list[int]:
    """`all` (every GPU CUDA sees: those CUDA_VISIBLE_DEVICES lists, else every GPU nvidia-smi
    lists) or `0,2`: the device indices of a node run."""
    if text != "all":
        try:
            devices = [int(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise GmbError(f"--devices: {text!r} is not 'all' or a list like 0,2", 2) from None
        if not devices or min(devices) < 0:
            raise GmbError(f"--devices: {text!r} is not 'all' or a list like 0,2", 2)
        return list(dict.fromkeys(devices))
    visible = [d for d in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if "CUDA_VISIBLE_DEVICES" in env:
        if not visible:
            raise GmbError("--devices all: CUDA_VISIBLE_DEVICES is empty: no GPU is visible")
        return list(range(len(visible)))
    try:
        listed = stopping.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                              capture_output=True, text=True, env=env)
    except OSError:
        raise GmbError("--devices all: nvidia-smi not found; name the devices (--devices 0,1)") \
            from None
    devices = [int(line) for line in listed.stdout.split() if line.strip().isdigit()]
    if listed.returncode != 0 or not devices:
        raise GmbError("--devices all: nvidia-smi lists no GPU")
    return devices


def list_benchmarks(binary: str, device: int, args: tuple[str, ...], repo: Path,
            env: dict[str, str]) -> list[str]:
    """The names `binary --benchmark_list_tests` prints with these options, in run order and
    without Google Benchmark's suffix; none where it fails (the run of that flavor says why)."""
    command = [binary, f"--device={device}", *args, "--benchmark_list_tests=true"]
    try:
        proc = stopping.run(command, cwd=repo, env=env, capture_output=True, text=True)
    except OSError:
        return []
    names = proc.stdout.split() if proc.returncode == 0 else []
    return [name.removesuffix(partial.TIME_SUFFIX) for name in names]


def build(repo: Path, env: dict[str, str], preset: str | None, cuda_archs: str | None,
          targets: list[str]) -> str:
    """scripts/setup, then configure and build `targets`; returns the preset used."""
    if not (repo / "scripts" / "setup").is_file():
        raise GmbError(f"setup failed: {repo / 'scripts' / 'setup'} not found")
    step("setup failed", ["bash", "scripts/setup"], repo, env)
    preset = choose_preset(preset)
    step("cmake configure failed", configure_command(preset, cuda_archs), repo, env)
    step("build failed", ["cmake", "--build", "--preset", preset, "--target", *targets], repo, env)
    return preset


def step(failure: str, command: list[str], repo: Path, env: dict[str, str]) -> None:
    """Run one preparation step with its output on the terminal; stop the run if it fails."""
    print(f"gmb: {shlex.join(command)}", flush=True)
    try:
        returncode = stopping.run(command, cwd=repo, env=env).returncode
    except FileNotFoundError:
        raise GmbError(f"{failure}: {command[0]} not found on PATH") from None
    if returncode != 0:
        raise GmbError(f"{failure} ({shlex.join(command)} exited with {returncode})", returncode)


def device_info(binary: str, device: int, repo: Path, env: dict[str, str],
                timeout: float | None = None) -> dict[str, Any]:
    """The binary's `--gmb_info` JSON. Without a usable GPU the binary exits non-zero with a
    one-line reason on stderr; that line becomes gmb's error, with the binary's exit code.
    Past `timeout` seconds the error starts with "timeout:"."""
    command = [binary, f"--device={device}", "--gmb_info"]
    try:
        proc = stopping.run(command, cwd=repo, env=env, capture_output=True, text=True,
                            timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GmbError(f"timeout: {shlex.join(command)} did not answer within "
                       f"{timeout:.0f} s") from None
    except OSError as err:
        raise GmbError(f"cannot run {binary} ({err.strerror}); did the build make it?") from None
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"{shlex.join(command)} exited with {proc.returncode}"
        raise GmbError(reason, proc.returncode)
    try:
        info = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise GmbError(f"{shlex.join(command)} did not print a JSON object") from None
    if not isinstance(info, dict):
        raise GmbError(f"{shlex.join(command)} did not print a JSON object")
    slug = info.get("gpu_slug")
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        raise GmbError(f"{shlex.join(command)} printed no usable gpu_slug (got {slug!r})")
    return info


def shown_path(path: Path, repo: Path) -> str:
    """Paths inside the repo are given relative to it (the commands run there), so recorded
    commands hold no user's home directory and stay valid in any checkout."""
    try:
        return str(path.relative_to(repo.resolve()))
    except ValueError:
        return str(path)
