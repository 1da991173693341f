"""Sessions on a Ray cluster: `corral serve --ray ADDRESS`, `Runtime(ray=...)`.

```
front (corral serve, one process)                 node (one SessionHost each)
Runtime ─ Session ─ RemoteActor ── commands ────►  SessionHost ─ Runtime ─ SessionActor ─ agent
              ▲ FanOut ◄── pump ◄── next_batch ──  Outbox (the session's one sink, bounded)
   lines, archive, metrics
```

`_cluster.py` (the Runtime's `Cluster`; imports Ray only when used),
`_connect.py` (`ray.init`), `_stdout.py` (fd 1 kept for the line protocol), `_hosts.py`
(a host per CPU of each node, placement, lost hosts), `_placement.py` (least loaded,
custom resources), `_host.py` (the Ray actor), `_front.py` (the proxy and
its pump), `_reaper.py` (no agent outlives its host).
"""

from ._cluster import Cluster
from ._stdout import private_stdout, ray_missing

__all__ = ["Cluster", "private_stdout", "ray_missing"]
