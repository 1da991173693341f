"""Redaction across streamed deltas: a secret split over several records.

Agents stream text a few characters at a time, so a key the model echoes
(`sk-ant-api03-...`) arrives spread over many `TextDelta` records, none of
which looks like a key alone. Records are written as they come (holding
them back would lose them in a crash), so each delta is redacted knowing
the recent text of its stream (a message id, or a tool id for output):

- a secret pattern matching the stream's recent text plus this delta
  masks the part of it that lies in this delta;
- a delta ending in what starts like a secret (`sk-ant-api03-AbCd`,
  `Bearer ab`, `GITHUB_TOKEN=gh`) has that start masked at once, since the
  rest may come in the next delta; only the non-secret prefix stays;
- inside a PEM private key block, everything is masked until its END line;
- the session's own secrets (`known`, the values of secret-named variables
  the app passed in `env`) are masked whole, or begun when a delta ends in
  at least `_KNOWN_BEGUN` characters of one.

State is kept per stream, bounded (the last `_WINDOW` characters).

Most deltas hold no secret and no hint of one (`might_hold_secret`), and
searching the whole recent text for hints at every delta would cost more
than everything else a delta costs. So each stream remembers where the
last hint it saw may end: a delta searches only its own text (plus the
few characters before it a hint could start in), and the recent text is
searched again only while a hint may still be in it.

Where a harmless hint recurs ("token" in prose), every delta holds one, and
each would search the region a secret reaching into it could start in
(`_LOOKBACK` characters and more): far more text than the delta. A writer
therefore hands over a batch's consecutive deltas of a stream together
(`redact_run`): they are searched as one text, region and all, once per
batch, and each delta gets the masks falling in it. That masks at least
what redacting the batch's text whole would; a partial is masked only at
the batch's end, where the rest may come later (inside the batch, the rest
is there to see). The lines reach the disk only after the whole batch is
redacted, so a crash cannot leave a delta's unmasked start behind.

Python's `re` has no partial matching, so "this hint was searched and
settled" cannot be known soundly per delta: a JSON value with a space
(`"password": "my pass` + `phrase"`) is no `PARTIAL`, yet its rest is a
secret. Batching keeps every search as wide as before and makes it rarer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ._patterns import CASED_HINTS, PARTIAL
from ._redact import _FILTER, KNOWN_SECRET, PATTERNS, Redaction, _hinted, might_hold_secret

__all__ = ["DeltaRedactor"]

_WINDOW = 512
_LOOKBACK = 160
_STREAM_PATTERNS = [
    (name, re.compile(regex)) for name, regex in PATTERNS.items() if name != "private_key"
]
_PARTIAL = PARTIAL  # what starts like a secret, at the end of a delta
# A hint may start this far back.
_HINT_REACH = max(len(hint) for hint in (*_FILTER, *CASED_HINTS)) - 1
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----")


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    start = match.end("keep") if "keep" in match.re.groupindex else match.start()
    return start, match.end()


class DeltaRedactor:
    def __init__(self, *, known: tuple[str, ...] = ()) -> None:
        self._known = known  # the session's own secrets (`Redactor.known`)
        self._tails: dict[str, str] = {}
        self._hint_ends: dict[str, int] = {}  # no hint in the tail ends after this index
        self._in_key: set[str] = set()

    def end(self, stream: str) -> None:
        self._tails.pop(stream, None)
        self._hint_ends.pop(stream, None)
        self._in_key.discard(stream)

    def redact(self, stream: str, text: str, found: Redaction) -> str:
        """`text` with every secret part masked, given what the stream said before."""
        return self.redact_run(stream, (text,), (found,))[0]

    def redact_run(
        self, stream: str, texts: Sequence[str], founds: Sequence[Redaction]
    ) -> list[str]:
        """Consecutive deltas of a stream, searched as one text; each masked, its
        replacements counted in its own `founds` entry."""
        if len(founds) != len(texts):
            raise ValueError("one Redaction per text")
        return self._run(stream, texts, founds.__getitem__)

    def masked_run(
        self, stream: str, texts: Sequence[str]
    ) -> tuple[list[str], dict[int, Redaction]]:
        """`redact_run`, and what was masked in each text that was (by its place):
        nearly every delta holds nothing, and is given nothing."""
        founds: dict[int, Redaction] = {}

        def found_at(place: int) -> Redaction:
            return founds.setdefault(place, Redaction())

        return self._run(stream, texts, found_at), founds

    def _run(
        self, stream: str, texts: Sequence[str], found_at: Callable[[int], Redaction]
    ) -> list[str]:
        tail = self._tails.get(stream, "")
        joined = tail + "".join(texts)
        offset = len(tail)
        spans = self._pem_spans(stream, joined, offset)
        # A secret touching this delta is one token, but its readable prefix
        # ("Bearer ", "export X_TOKEN=") may hold spaces: look a little further back.
        rfind = joined.rfind
        space = max(rfind(" ", 0, offset), rfind("\n", 0, offset), rfind("\t", 0, offset))
        start = max(0, space - _LOOKBACK)
        hint_end = len(joined) if might_hold_secret(joined[max(0, offset - _HINT_REACH) :]) else 0
        hint_end = max(hint_end, self._hint_ends.get(stream, 0))
        if hint_end > start:  # a hint may lie in the region: search it
            spans.extend(self._secrets(joined, start, offset))
        if self._known:
            spans.extend(_known_spans(self._known, joined, offset))
        tail = joined[-_WINDOW:]
        self._tails[stream] = tail
        self._hint_ends[stream] = max(0, hint_end - (len(joined) - len(tail)))
        if not spans:
            return list(texts)
        return _mask_run(texts, offset, spans, found_at)

    @staticmethod
    def _secrets(joined: str, start: int, offset: int) -> list[tuple[int, int, str]]:
        """Secrets, whole or begun, in `joined[start:]` that reach past `offset`.

        Only the patterns whose own literals are in the region run (text that
        keeps saying "tokens" would otherwise run them all at every delta);
        a begun secret's start always holds its pattern's literal too.
        """
        spans: list[tuple[int, int, str]] = []
        region = joined[start:]
        lowered = region.lower()
        hinted = [(n, p) for n, p in _STREAM_PATTERNS if _hinted(n, region, lowered)]
        for name, pattern in hinted:
            for match in pattern.finditer(region):
                first, end = _secret_span(match)
                if end + start > offset:
                    spans.append((max(first + start, offset), end + start, name))
        ending = region[-_LOOKBACK:]
        if any(_hinted(name, ending, ending.lower()) for name, _ in hinted):
            partial = _PARTIAL.search(ending)
            base = len(joined) - len(ending)
            if partial is not None and partial.end() + base > offset:
                first, end = _secret_span(partial)
                spans.append((max(first + base, offset), end + base, "partial_secret"))
        return spans

    def _pem_spans(self, stream: str, joined: str, offset: int) -> list[tuple[int, int, str]]:
        """Key material of PEM private keys in this delta (BEGIN/END lines stay)."""
        spans: list[tuple[int, int, str]] = []
        inside = stream in self._in_key
        # A BEGIN or END line may straddle the previous delta and this one; anything
        # before that was settled by the earlier deltas (`inside` remembers it).
        position = max(0, offset - 64)
        if not inside and "-----" not in joined[position:]:
            return spans
        while True:
            if not inside:
                begin = _PEM_BEGIN.search(joined, position)
                if begin is None:
                    break
                inside, position = True, begin.end()
                continue
            end = _PEM_END.search(joined, position)
            stop = len(joined) if end is None else end.start()
            if stop > offset:
                spans.append((max(position, offset), stop, "private_key"))
            if end is None:
                break
            inside, position = False, end.end()
        if inside:
            self._in_key.add(stream)
        else:
            self._in_key.discard(stream)
        return spans


_KNOWN_BEGUN = 4  # a delta ending in this much of a known secret has it masked at once


def _known_spans(known: tuple[str, ...], joined: str, offset: int) -> list[tuple[int, int, str]]:
    """The session's own secrets, whole or begun, reaching into this delta."""
    spans: list[tuple[int, int, str]] = []
    for value in known:
        position = joined.find(value, max(0, offset - len(value) + 1))
        while position >= 0:
            spans.append((max(position, offset), position + len(value), KNOWN_SECRET))
            position = joined.find(value, position + 1)
        # The end of the delta may be the start of the value: its rest may come next.
        ending = joined[-(len(value) - 1) :]
        head = value[:_KNOWN_BEGUN]
        begun = ending.find(head)
        while begun >= 0:
            if value.startswith(ending[begun:]):
                start = len(joined) - len(ending) + begun
                if len(joined) > offset:
                    spans.append((max(start, offset), len(joined), KNOWN_SECRET))
                break
            begun = ending.find(head, begun + 1)
    return spans


def _mask_run(
    texts: Sequence[str],
    offset: int,
    spans: list[tuple[int, int, str]],
    found_at: Callable[[int], Redaction],
) -> list[str]:
    """Each text with the parts of `spans` (joined coordinates) that fall in it masked."""
    masked: list[str] = []
    for place, text in enumerate(texts):
        end = offset + len(text)
        inside = [(max(a, offset), min(b, end), n) for a, b, n in spans if a < end and b > offset]
        masked.append(_mask(text, offset, inside, found_at(place)) if inside else text)
        offset = end
    return masked


def _mask(text: str, offset: int, spans: list[tuple[int, int, str]], found: Redaction) -> str:
    """Replace the spans (in joined coordinates, all ending inside `text`), merged."""
    merged: list[tuple[int, int, str]] = []
    for start, end, name in sorted(spans):
        if merged and start <= merged[-1][1]:
            first, last, kept = merged[-1]
            merged[-1] = (first, max(last, end), kept)
        else:
            merged.append((start, end, name))
    pieces: list[str] = []
    cursor = 0
    for start, end, name in merged:
        pieces.append(text[cursor : start - offset])
        pieces.append(f"[REDACTED:{name}]")
        found.add(name)
        cursor = end - offset
    pieces.append(text[cursor:])
    return "".join(pieces)
