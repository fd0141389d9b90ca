"""The files a repository check reads: what git tracks below `root` and the untracked files it does not
ignore (so a new file is checked before it is added), or, outside a git checkout (the checkers' own
tests plant violations in a temporary tree), every file below it but .git and build folders. Shared by
check_includes.py and check_references.py."""
import os
import subprocess


def list_files(root):
    if os.path.exists(os.path.join(root, ".git")):  # a folder, or a file in a worktree
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            check=True, capture_output=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    else:
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git" and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(dirpath, n), root) for n in filenames]
    return sorted(f for f in files if os.path.isfile(os.path.join(root, f)))
