"""Whether two builds' binaries hold the same SASS for one architecture, kernel by kernel.

    python3 sass_identity.py BEFORE_DIR AFTER_DIR [sm_90]

Dumps gmembench, gmembench-ca and gmembench-cg of each build with `cuobjdump -sass -arch`
(cuobjdump on PATH) and compares every kernel's instructions (addresses and encodings left
out). Two renames are expected and mapped: CUB's namespace names the architectures a build
holds, anonymous namespaces carry a hash of their file, and local_spill's template argument
became the register count (8 -> 32, 1 -> 255).
"""
import collections
import re
import subprocess
import sys

RENAMES = (("ILj8EEEvPKjPjmj", "ILj32EEEvPKjPjmj"), ("ILj1EEEvPKjPjmj", "ILj255EEEvPKjPjmj"))


def kernels(binary: str, arch: str) -> dict[str, list[str]]:
    text = subprocess.run(["cuobjdump", "-sass", "-arch", arch, binary], check=True,
                          capture_output=True, text=True).stdout
    found, current = collections.defaultdict(list), None
    for line in text.splitlines():
        if m := re.search(r"Function : (\S+)", line):
            name = re.sub(r"3cub\d+CUB_\d+_SM_[\d_]+detail", "3cub@detail", m.group(1))
            name = re.sub(r"_GLOBAL__N__[0-9a-f]+_", "_GLOBAL__N__@_", name)
            if "local_spill" in name:
                for old, new in RENAMES:
                    name = name.replace(old, new)
            current = name
        elif current and (m := re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)):
            found[current].append(m.group(1))
    return found


def main() -> int:
    before, after, arch = sys.argv[1], sys.argv[2], (sys.argv[3:] or ["sm_90"])[0]
    same = True
    for binary in ("gmembench", "gmembench-ca", "gmembench-cg"):
        a, b = kernels(f"{before}/{binary}", arch), kernels(f"{after}/{binary}", arch)
        differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
        missing = sorted(a.keys() ^ b.keys())
        print(f"{binary} {arch}: {len(a)} and {len(b)} kernels, {sum(map(len, a.values()))} and "
              f"{sum(map(len, b.values()))} instructions; {len(differ)} differ, "
              f"{len(missing)} in one build only")
        for name in differ + missing:
            print(f"  {name}")
        same = same and not differ and not missing
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
