"""Start bwrap with nothing of the host on its command line or in its environment.

`python -I -S bwrap_launch.py BWRAP N OPTION... COMMAND...`: bwrap's options name the mounts' host paths, and the
sandbox's pid 1 (the course's init, `course.judge.sandbox_init`, which bwrap's sandboxed process becomes by exec)
is a process the sandbox sees, its command line always readable there. So bwrap is started with an empty environment
(the command's comes as `--setenv` options) and its N options are handed over in a memfd (`--args`, which bwrap
closes once it has read them); what remains on bwrap's command line is `BWRAP --args FD -- COMMAND`, outside the
sandbox, and on its pid 1's the command, which the sandbox runs anyway.
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
