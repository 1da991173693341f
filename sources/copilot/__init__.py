"""GitHub Copilot CLI on its native SessionEvents: live (`copilot-native`) and replayed."""

from ._catalog import catalog_entry
from ._driver import CopilotDriver
from ._normalize import CopilotNormalizer
from ._transcript import TranscriptDecoder, read_native_transcript

__all__ = [
    "CopilotDriver",
    "CopilotNormalizer",
    "TranscriptDecoder",
    "catalog_entry",
    "read_native_transcript",
]
