"""Layer 1, data: what is on disk and what it is called. Google Benchmark JSON (plain or gzip)
as records and medians, run_info.json, node.json, a fleet folder's files, a file cut short by a
stop and its continuation; benchmark names, flavors and slugs. No analysis, no output."""
