"""Line-protocol lines are counted by type as they are written."""

from __future__ import annotations

from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.wire import closed_line, error_line, hello_line, ok_line, session_error_line
from corral.sinks.metrics import Metrics
from corral.sinks.metrics._lines import count_lines

from tests.unit.metrics.conftest import value

ERROR = CorralError(ErrorKind.BAD_FRAME, "no")
BATCH = b"".join(
    [
        hello_line("1.0"),
        ok_line(1, None),
        error_line(2, ERROR),
        error_line(None, ERROR),
        b'{"event":{"sequence":1}}\n',
        b'{"event":{"sequence":2}}\n',
        session_error_line("s1", ERROR),
        closed_line("s1"),
    ]
)


def test_a_batch_is_counted_by_line_type() -> None:
    assert count_lines(BATCH) == {
        "hello": 1,
        "reply": 1,
        "error": 2,
        "event": 2,
        "session_error": 1,
        "closed": 1,
    }


def test_text_inside_a_line_is_not_taken_for_a_line_start() -> None:
    line = b'{"event":{"text":"{\\"closed\\": 1} {\\"id\\":1,\\"error\\"}"}}\n'
    assert count_lines(line)["event"] == 1
    assert count_lines(line)["closed"] == 0
    assert count_lines(line)["error"] == 0


class Collected:
    def __init__(self) -> None:
        self.data = b""

    async def write(self, data: bytes) -> None:
        self.data += data


async def test_the_counter_passes_every_byte_through_and_counts_it() -> None:
    metrics = Metrics(version="test")
    inner = Collected()
    await metrics.count_lines(inner).write(BATCH)
    assert inner.data == BATCH
    assert value(metrics, "corral_line_messages_total", type="event") == 2
    assert value(metrics, "corral_line_bytes_total") == len(BATCH)
