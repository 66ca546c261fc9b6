"""The final-message sentinel: a fenced block tagged ``uh-runtime-final-message``.

The last complete block wins; CRLF, indentation of the fence, surrounding whitespace and
spaces after the tag are tolerated; an unclosed block is ignored; no block → None.

Agreed with the TypeScript uh (docs/compat.md, "The sentinel"): the opening fence may follow
text on its line (``Summary: ```uh-runtime-final-message``), as long as only spaces follow
the tag; a closing fence may be followed by text on its line (the text is not part of the
message). One rule of our own: a block with nothing in it but whitespace is no message — it
returns None and never replaces an earlier block (the TypeScript tool returns none for
``tag\n``` `` but ``""`` for a block holding one blank line).
"""

from __future__ import annotations

import re

TAG = "uh-runtime-final-message"

INSTRUCTION = f"""## Final message

When you are done, end your reply with a short summary of what you changed and why, inside a
fenced block tagged `{TAG}`, exactly like this:

```{TAG}
<one paragraph: what you changed, what you verified, anything left open>
```
"""

_OPEN = re.compile(rf"(`{{3,}}|~{{3,}})[ \t]*{re.escape(TAG)}[ \t]*$")


def extract_final_message(text: str) -> str | None:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found: str | None = None
    index = 0
    while index < len(lines):
        opened = _OPEN.search(lines[index])
        if not opened:
            index += 1
            continue
        fence = opened.group(1)
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}")
        for end in range(index + 1, len(lines)):
            if close.match(lines[end]):
                body = "\n".join(lines[index + 1 : end]).strip()
                found = body or found  # an empty block is no message
                index = end + 1
                break
        else:
            break  # unclosed: ignored, and nothing after it can close an earlier block
    return found
