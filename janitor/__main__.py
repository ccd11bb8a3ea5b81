import sys

from janitor.relay import main

sys.exit(main(sys.argv[1:]))
