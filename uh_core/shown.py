"""Values from files, shown to people at a bounded length.

Anything uh prints or renders that came from a file — a description, a snippet, an event
field, the value an error quotes — is cut to a stated length with a marker that says how
much there was, so a 50 MB event line or a 100 MB description costs what its first
characters cost.
"""

from __future__ import annotations

import re

LINE = 2000  # one rendered line (``uh-core tail``, a status line)
VALUE = 300  # a value quoted inside a message


def clip(text: str, limit: int = VALUE) -> str:
    """``text`` whole when it fits, else its first ``limit`` characters and a marker."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text):,} characters]"


def fenced(text: str) -> str:
    """``text`` in a Markdown code fence longer than any run of backticks it holds (so what
    a human or a failing check wrote cannot close the fence early, in a prompt)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def plural(count: int, noun: str) -> str:
    """``1 mission``, ``3 missions``; ``1 sandbox``, ``2 sandboxes``; ``1 criterion``,
    ``2 criteria``: a count and its noun agree wherever uh prints one."""
    if count == 1:
        return f"{count} {noun}"
    if noun in _IRREGULAR:
        return f"{count} {_IRREGULAR[noun]}"
    return f"{count} {noun}{'es' if noun.endswith(('s', 'x', 'sh', 'ch')) else 's'}"


_IRREGULAR = {"criterion": "criteria"}
