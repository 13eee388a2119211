"""pid 1 of a bubblewrap sandbox, in place of bwrap's own reaper (which the student's code could read and trace).

Run as `python -I -S -c <this text> COMMAND...` after `bwrap --as-pid-1`: no path of the host on its command line.
It makes itself undumpable (under a grader that is not root it has the sandbox's own uid, and would be traceable,
its memory and environment readable), forks COMMAND, reaps every orphan, and exits as COMMAND did (128 + the signal
that killed it, as bwrap does); the PID namespace, everything the student started, ends with it. As pid 1 it gets
no signal it has no handler for (but SIGKILL from outside the namespace): the grader's interrupt reaches the kernel.
"""

import ctypes
import os
import signal
import sys

PR_SET_DUMPABLE = 4

if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
    sys.exit(f"sandbox init: prctl: {os.strerror(ctypes.get_errno())}")
for changed in (
    signal.SIGINT,
    signal.SIGPIPE,
    signal.SIGXFSZ,
):  # Python's own handlers, which COMMAND inherits
    signal.signal(changed, signal.SIG_DFL)
command = sys.argv[1:]
child = os.fork()
if child == 0:
    try:
        os.execvp(command[0], command)
    except OSError as error:
        print(f"sandbox init: {command[0]}: {error.strerror}", file=sys.stderr)
    os._exit(127)
while True:
    pid, status = os.waitpid(-1, 0)
    if pid == child:
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)
