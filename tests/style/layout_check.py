#!/usr/bin/env python3
"""Fails when a folder of the tree is not named in docs/layout.md.

The tree is what git tracks (so build/ and .deps/ are not in it). Every top-level folder and
every second-level folder must appear in docs/layout.md as `path/` (in backticks), so that a
newcomer finds every folder described. Exit 77 (skipped) outside a git work tree.

  python3 tests/style/layout_check.py [SOURCE_DIR]
"""
import os
import subprocess
import sys


def tracked_folders(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
    folders = set()
    for path in out.decode("utf-8", "replace").split("\0"):
        parts = path.split("/")
        if len(parts) > 1:
            folders.add(parts[0] + "/")
        if len(parts) > 2:
            folders.add(parts[0] + "/" + parts[1] + "/")
    return folders


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    try:
        folders = tracked_folders(root)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"layout_check: skipped, not a git work tree ({e})")
        return 77
    with open(os.path.join(root, "docs", "layout.md"), encoding="utf-8") as f:
        page = f.read()
    missing = sorted(d for d in folders if f"`{d}`" not in page)
    for d in missing:
        print(f"layout_check: {d} is not named in docs/layout.md (add a line for it)")
    print(f"layout_check: {len(folders) - len(missing)} of {len(folders)} folders named")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
