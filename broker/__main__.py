import os
import sys

from broker.server import main

code = main()
sys.stdout.flush()
sys.stderr.flush()
# Everything the broker owns is in memory and its log is flushed: leave without waiting for
# idle pool and housekeeping threads to notice the end (interpreter teardown cost ~2 s).
os._exit(code)
