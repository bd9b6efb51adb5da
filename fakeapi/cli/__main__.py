"""`python -m fakeapi.cli`: the same as the `fakeapi` command."""

import sys

from fakeapi.cli.main import main

sys.exit(main())
