import sys

from conformance.front.cli import main

sys.exit(main())
