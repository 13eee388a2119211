"""`python -m course …`: the course's command line."""

import os
import sys

# argparse prints the help and exits: no kernel runs, so no CPU-mode banner (utils.runtime.BANNER_SHOWN)
if {"-h", "--help"} & set(sys.argv[1:]):
    os.environ["FLASH_COURSE_BANNER_SHOWN"] = "1"

from course.cli import main  # noqa: E402  (imports utils, which shows the banner)

raise SystemExit(main())
