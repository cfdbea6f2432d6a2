"""A node run (`gmb run --devices`): every GPU in turn, or with --concurrent every GPU's local
families at once and then the peer family GPU by GPU, so no two peer benchmarks share a link;
node.json and the node's summary.md. Standard library only."""

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gmbtools.commands import run_state
from gmbtools.commands.binaries import list_benchmarks
from gmbtools.commands.flavor_files import PEER_PART, merge_part
from gmbtools.commands.flavor_runs import (PEER_PREFIXES, finish_device,
                                           run_flavor, run_flavors, start_record)
from gmbtools.commands.run_options import Options
from gmbtools.data import node as node_record
from gmbtools.data import runinfo
from gmbtools.data.flavors import json_name
from gmbtools.data.runinfo import FlavorRun
from gmbtools.present import node_summary


def run_node(folder: Path, devices: list[int], infos: dict[int, dict[str, Any]],
              binaries: dict[str, str], options: Options, preset: str, repo: Path,
              env: dict[str, str]) -> list[str]:
    """Each GPU into its own gpu<index>-<uuid>/ folder, one after another or all at once
    (--concurrent: with two GPUs or more, the local families at once, then the peer family GPU
    by GPU), then node.json and the node's summary.md."""
    subfolders = {d: folder / f"gpu{d}-{infos[d].get('gpu_uuid', 'unknown')}" for d in devices}
    records = {d: start_record(options, preset, infos[d]) for d in devices}
    for d, sub in subfolders.items():
        sub.mkdir()
        runinfo.save(records[d], sub)
    node = node_record.Node(
        gmb_command=options.gmb_command, concurrent=options.concurrent,
        devices=[node_record.NodeDevice(index=d, uuid=str(infos[d].get("gpu_uuid")),
                                         name=str(infos[d].get("gpu_name")),
                                         folder=subfolders[d].name) for d in devices])
    node_record.save_node(folder, node)
    split = options.concurrent and len(devices) > 1  # one GPU has no peer to share a link with

    def flavors(device: int) -> list[FlavorRun]:
        return run_flavors(subfolders[device], device, binaries, options, repo, env, False,
                            to_logs=options.concurrent,
                            part=("--gmb_peer=skip",) if split else ())

    problems = []
    peer_runs: dict[int, list[FlavorRun]] = {d: [] for d in devices}
    if options.concurrent:  # the binaries at once; summaries and figures one at a time after
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=len(devices)) as pool:
            runs = dict(zip(devices, pool.map(flavors, devices)))
        if split:
            phases = [node_record.NodePhase("local", devices, seconds_since(start))]
            for d in devices:
                if run_state.stopper.stopped:
                    break
                start = time.monotonic()
                partner = partners(devices)[d]
                peer_runs[d], failed = run_peer_part(subfolders[d], d, partner, binaries,
                                                      options, repo, env, sys.stderr.isatty())
                problems += [f"GPU {d}: {p}" for p in failed]
                phases.append(node_record.NodePhase("peer", [d], seconds_since(start),
                                                     partner))
            node = node_record.Node(node.gmb_command, node.concurrent, node.devices, phases)
            node_record.save_node(folder, node)
        for d in devices:
            problems += [f"GPU {d}: {p}" for p in finish_device(
                subfolders[d], runs[d], options, preset, tuple(peer_runs[d]), records[d])]
    else:
        for d in devices:
            problems += [f"GPU {d}: {p}" for p in finish_device(
                subfolders[d], flavors(d), options, preset, record=records[d])]
    path, _ = node_summary.write(folder)  # each GPU's unreadable files are in `problems`
    print(f"gmb: wrote {path}", flush=True)
    return problems


def partners(devices: list[int]) -> dict[int, int]:
    """Each GPU's partner in the peer phase of a concurrent node run: the next GPU of the
    node's list (a resume of the run measures with the same partners)."""
    return {d: devices[(k + 1) % len(devices)] for k, d in enumerate(devices)}


def partner_flag(options: Options, partner: int) -> tuple[str, ...]:
    """--gmb_peer_partner for the binary, unless the user named one."""
    if any(a.startswith("--gmb_peer_partner") for a in options.passthrough):  # =J or J
        return ()
    return (f"--gmb_peer_partner={partner}",)


def run_peer_part(folder: Path, device: int, partner: int, binaries: dict[str, str],
                   options: Options, repo: Path, env: dict[str, str],
                   interactive: bool) -> tuple[list[FlavorRun], list[str]]:
    """The peer family of every flavor on `device` alone (`--gmb_peer=only`, the partner the
    next GPU of the node's list unless the user named one), each merged into its flavor's
    file. A flavor with no peer benchmark to run (a filter, a build that runs the family in
    the default flavor only, no peer access) is skipped with a note."""
    partner_args = partner_flag(options, partner)
    runs, problems = [], []
    for flavor in options.flavors:
        if not any(name.startswith(PEER_PREFIXES) for name in list_benchmarks(
                binaries[flavor], device, (*partner_args, *options.passthrough), repo, env)):
            print(f"gmb: GPU {device}, flavor {flavor}: no peer benchmark to run", flush=True)
            continue
        if run_state.stopper.stopped:
            break
        ran = run_flavor(flavor, binaries[flavor], folder, device, options, repo, env,
                          f"GPU {device} {flavor} peer" if interactive else None, True,
                          part=("--gmb_peer=only", *partner_args), suffix=PEER_PART)
        runs += ran
        part = folder / f"{flavor}{PEER_PART}.json"
        if part.exists() or ran[-1].exit_code == 0:  # a failed run is reported by its exit code
            problem = merge_part(folder / json_name(flavor), part)
            problems += [problem] if problem else []
    return runs, problems


def seconds_since(start: float) -> float:
    return round(time.monotonic() - start, 3)
