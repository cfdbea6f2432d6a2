"""Layer 4, commands: the `gmb` command line (cli.py; subcommands/: one module per
subcommand, its options and its handler) and the process plumbing
its subcommands need: building and running the binaries (run.py), stops and the watchdog
(stopping.py), the peer matrix (peers.py), patterns (pattern.py), Slurm fleets (fleet.py),
Nsight Compute (ncu.py). The only layer that starts processes."""
