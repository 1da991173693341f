"""`corral transcripts serve`: the archive in a browser, local and read-only.

A list of every session (filters, full-text search through the index) and
each session's page, rendered by the HTML export's own renderer, with
live sessions updating as they grow (server-sent events and one small
plain script, shipped as package data: no build step, no CDN).

aiohttp serves it and Jinja2 (autoescape on) renders the list: both come
with the `viewer` extra. This package imports neither: `_command`
registers `serve` and imports `_app` / `_server` only when it runs, and
without the extra says how to install it. `_listing` (what a row shows)
and `_reading` (the archive, read-only, in a thread) need neither.
"""

from ._command import register_serve

__all__ = ["register_serve"]
