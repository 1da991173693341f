"""The line writer holds a bounded number of bytes, not only of lines (issue 17).

While the app does not read, senders wait once the lines they queued hold
`max_bytes`; one line larger than the budget still goes, alone; when the
app reads again every line is written once.
"""

from __future__ import annotations

import asyncio

from corral.sinks.lines import LineWriter

from tests.support.waiting import settled

MIB = 1024 * 1024


class StuckStream:
    """An app that reads nothing until `gate` opens."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.written: list[bytes] = []

    async def write(self, data: bytes) -> None:
        await self.gate.wait()
        self.written.append(data)


async def test_senders_wait_once_the_lines_they_queued_hold_the_byte_budget() -> None:
    stream = StuckStream()
    writer = LineWriter(stream, max_bytes=2 * MIB)
    lines = [bytes([65 + n]) * (MIB // 2 - 1) + b"\n" for n in range(12)]  # 6 MiB in all
    queued: list[int] = []

    async def send(n: int) -> None:
        await writer.line(lines[n])
        queued.append(n)

    async with asyncio.TaskGroup() as tasks:
        tasks.create_task(writer.run())
        for n in range(len(lines)):
            tasks.create_task(send(n))
        await settled()  # every sender that can go has gone
        # One line in the stuck write, four in the channel (its 2 MiB), seven waiting.
        assert writer.lines.statistics().bytes <= 2 * MIB
        assert 4 <= len(queued) <= 5
        stream.gate.set()
        await settled()
        assert len(queued) == len(lines)
        writer.close()
    # All of it, once each (the order between senders is the channel's to choose;
    # one session's lines come from one sender, in its order).
    assert sorted(stream.written) == sorted(lines)


async def test_a_line_larger_than_the_budget_goes_alone() -> None:
    stream = StuckStream()
    writer = LineWriter(stream, max_bytes=MIB)
    huge = b"x" * (20 * MIB) + b"\n"
    small = b"small\n"
    async with asyncio.TaskGroup() as tasks:
        tasks.create_task(writer.run())
        await writer.line(huge)
        await settled()
        assert not len(writer.lines)  # the writer took it: stuck writing
        await writer.line(huge)  # nothing else held: it passes, alone
        after = tasks.create_task(writer.line(small))
        await settled()
        assert not after.done()  # 20 MiB held: the next line waits
        stream.gate.set()
        await after
        writer.close()
    assert b"".join(stream.written) == huge + huge + small


async def test_discard_ends_the_write_under_way_and_counts_what_is_left_as_dropped() -> None:
    stream = StuckStream()
    writer = LineWriter(stream)
    async with asyncio.TaskGroup() as tasks:
        running = tasks.create_task(writer.run())
        await writer.line(b"first\n")
        await settled()  # the first line is in the stuck write
        await writer.line(b"second\n")
        writer.discard()
        writer.close()
        await running  # the writer ends although the app never reads
    assert stream.written == []
    assert (writer.bytes_written, writer.bytes_dropped) == (0, len(b"first\nsecond\n"))
    assert not writer.busy


async def test_a_cancel_from_outside_still_cancels_the_writer_while_it_writes() -> None:
    stream = StuckStream()
    writer = LineWriter(stream)
    running = asyncio.create_task(writer.run())
    await writer.line(b"first\n")
    await settled()
    running.cancel()
    await asyncio.wait([running])
    assert running.cancelled()
    # A cancel that comes with a discard is not swallowed by it either.
    writer = LineWriter(stream)
    running = asyncio.create_task(writer.run())
    await writer.line(b"first\n")
    await settled()
    writer.discard()
    running.cancel()
    await asyncio.wait([running])
    assert running.cancelled()
