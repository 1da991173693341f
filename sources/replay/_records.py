"""The one record a replay produces that the live pipeline does not (yet) carry.

`Prompted` is the text of a prompt the user sent, as a record beside the
events (like `Decision`, it has no sequence number, so recording it never
makes a gap). The replay runner emits one per `PromptSent`; the transcript
keeps it so an archived session shows what was asked. It mirrors the record
proposed for `pipeline/records.py`, where the live engine would emit it from
`prompt`; until then it lives here.
"""

from __future__ import annotations

import attrs

from ...pipeline.events import SystemTime

__all__ = ["Prompted"]


@attrs.frozen(kw_only=True)
class Prompted:
    session_id: str
    prompt_id: str
    text: str
    at: SystemTime
    attachments: tuple[str, ...] = ()
