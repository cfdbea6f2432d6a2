#!/bin/sh
# Runs a command with GMB_SMALL_FS_DIR set to a 256-KiB tmpfs of its own, mounted in a private
# mount namespace (as root, or in a user namespace where unprivileged ones are allowed), so a
# test can fill a file system. Exits 77 (CTest: skipped) where no such mount can be made.
dir=$(mktemp -d) || exit 77
trap 'rmdir "$dir" 2>/dev/null' EXIT
mount_and_run='mount -t tmpfs -o size=256k gmb-small "$0" || exit 77; GMB_SMALL_FS_DIR="$0" "$@"'
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
  unshare --mount sh -c "$mount_and_run" "$dir" "$@"
elif unshare --user --map-root-user --mount true 2>/dev/null; then
  unshare --user --map-root-user --mount sh -c "$mount_and_run" "$dir" "$@"
else
  echo "with_small_tmpfs.sh: no private mount namespace here: skipped" >&2
  exit 77
fi
