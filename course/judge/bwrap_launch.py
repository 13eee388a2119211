"""Start bwrap with nothing of the host on its command line or in its environment.

`python -I -S bwrap_launch.py BWRAP N OPTION... COMMAND...`: bwrap's pid 1 (its reaper, a copy of bwrap) is a
process the sandbox sees, its command line always readable there and its environment where the sandbox shares its
uid. So bwrap is started with an empty environment (the command's comes as `--setenv` options) and its N options
(the mounts' host paths) are handed over in a memfd (`--args`, which bwrap closes once it has read them); what
remains on its command line is `BWRAP --args FD -- COMMAND`, the command being what the sandbox runs anyway.
"""

import os
import sys


def launch(bwrap: str, count: str, *rest: str) -> None:
    options, command = rest[: int(count)], rest[int(count) :]
    fd = os.memfd_create("bwrap-options", 0)  # inherited by bwrap
    with open(fd, "wb", closefd=False) as file:
        file.write(b"".join(os.fsencode(option) + b"\0" for option in options))
    os.lseek(fd, 0, os.SEEK_SET)
    os.execve(bwrap, [bwrap, "--args", str(fd), "--", *command], {})


if __name__ == "__main__":
    launch(*sys.argv[1:])
