"""Entry point: `python -m tests.support.fake_appserver` (see the package docstring)."""

import asyncio

from ._server import main

asyncio.run(main())
