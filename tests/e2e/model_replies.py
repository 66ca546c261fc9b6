"""The model server's replies, one function per wire protocol (``model_server.py`` routes).

Each conversation goes: step 0 a read-type tool call on the target, step 1 a write/patch tool
call appending the script's line, then the final text; the step is the number of tool results
the request carries. ``noop`` answers the final text at once. Tool names and argument shapes are
the ones each CLI declared in its recorded requests.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.e2e.model_server import Script, _Handler


def new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def cwd_of(body: Any) -> str:
    """The working directory the CLI told the model about (in its system prompt)."""
    text = json.dumps(body)
    found = re.search(
        r"(?:Primary working directory|Working directory|Current working directory|cwd)"
        r"\s*(?:is)?:?\s*`?(/[^\s\"\\`]+)",
        text,
    )
    return found.group(1).rstrip(".") if found else ""


def _pick(names: list[str], preferred: list[str]) -> str | None:
    return next((name for name in preferred if name in names), None)


# -- limits (HTTP 429), as each provider words them ---------------------------------------
def rate_limit_body(anthropic: bool, retry_after: int) -> dict[str, Any]:
    """A rate limit's body: Anthropic's says no time (its ``retry-after`` header does);
    OpenAI's says "try again in Ns" in its message, as OpenAI's own does."""
    if anthropic:
        message = (
            "This request would exceed the rate limit for your organization (org-mock) of "
            "50 requests per minute. For details, refer to: "
            "https://docs.claude.com/en/api/rate-limits. You can see the response headers "
            "for current usage. Please reduce the prompt length or the maximum tokens "
            "requested, or try again later."
        )
        return {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    message = (
        "Rate limit reached for mock-model in organization org-mock on requests per min "
        f"(RPM): Limit 3, Used 3, Requested 1. Please try again in {retry_after}s. Visit "
        "https://platform.openai.com/account/rate-limits to learn more."
    )
    error = {"message": message, "type": "requests", "param": None, "code": "rate_limit_exceeded"}
    return {"error": error}


def usage_limit_body(anthropic: bool, resets: float) -> dict[str, Any]:
    """A usage limit's body: "usage limit reached … resets at <ISO time>" (OpenAI's also with
    the ``usage_limit_reached`` type and ``resets_at`` Unix time codex reads)."""
    when = datetime.fromtimestamp(resets, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    message = f"Usage limit reached for this organization; it resets at {when}."
    if anthropic:
        return {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    error: dict[str, Any] = {"message": message, "type": "usage_limit_reached"}
    error |= {"resets_at": int(resets), "resets_in_seconds": max(0, round(resets - time.time()))}
    return {"error": error}


# -- OpenAI Responses (codex) ------------------------------------------------------------
def responses(h: _Handler, body: Any, script: Script) -> None:
    items = body.get("input") or []
    outputs = [
        i
        for i in items
        if isinstance(i, dict)
        and i.get("type") in ("function_call_output", "custom_tool_call_output")
    ]
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    step = 2 if script.mode == "noop" else len(outputs)
    rid = new_id("resp_")
    h._sse_start()
    h._sse(None, {"type": "response.created", "response": {"id": rid}})
    item: dict[str, Any]
    if step == 0:
        name = _pick(tools, ["exec_command", "shell_command", "shell"]) or "shell"
        if name == "exec_command":
            args: dict[str, Any] = {"cmd": f"cat {script.target}"}
        elif name == "shell_command":
            args = {"command": f"cat {script.target}"}
        else:
            args = {"command": ["bash", "-lc", f"cat {script.target}"]}
        item = {
            "type": "function_call",
            "id": "fc_1",
            "name": name,
            "arguments": json.dumps(args),
            "call_id": "call_read_1",
        }
    elif step == 1:
        patch = (
            f"*** Begin Patch\n*** Update File: {script.target}\n@@\n {script.old}\n"
            f"+{script.line}\n*** End Patch\n"
        )
        spec = next((t for t in body.get("tools") or [] if t.get("name") == "apply_patch"), None)
        if spec is not None and spec.get("type") == "custom":
            item = {
                "type": "custom_tool_call",
                "id": "ctc_2",
                "name": "apply_patch",
                "input": patch,
                "call_id": "call_patch_2",
            }
        elif spec is not None:
            item = {
                "type": "function_call",
                "id": "fc_2",
                "name": "apply_patch",
                "arguments": json.dumps({"input": patch}),
                "call_id": "call_patch_2",
            }
        else:  # a model codex has no metadata for gets no apply_patch tool: a shell append
            append = f"printf '%s\\n' '{script.line}' >> {script.target}"
            name = _pick(tools, ["exec_command", "shell_command"]) or "exec_command"
            key = "cmd" if name == "exec_command" else "command"
            item = {
                "type": "function_call",
                "id": "fc_2",
                "name": name,
                "arguments": json.dumps({key: append}),
                "call_id": "call_patch_2",
            }
    else:
        text = {"type": "output_text", "text": script.final, "annotations": []}
        item = {"type": "message", "role": "assistant", "id": "msg_3", "content": [text]}
    h._sse(None, {"type": "response.output_item.added", "output_index": 0, "item": item})
    h._sse(None, {"type": "response.output_item.done", "output_index": 0, "item": item})
    usage = {
        "input_tokens": 5200 + 300 * step,
        "input_tokens_details": {"cached_tokens": 4096 if step else 0},
        "output_tokens": 40 + 20 * step,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 5240 + 320 * step,
    }
    h._sse(None, {"type": "response.completed", "response": {"id": rid, "usage": usage}})


# -- Anthropic Messages (claude) ---------------------------------------------------------
def messages(h: _Handler, body: Any, script: Script) -> None:
    msgs = body.get("messages") or []
    tools = [t.get("name") for t in body.get("tools") or []]
    results = sum(
        1
        for m in msgs
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for c in m["content"]
        if isinstance(c, dict) and c.get("type") == "tool_result"
    )
    model = body.get("model", "claude-sonnet-4-6")
    mid = new_id("msg_")
    path = f"{cwd_of(body)}/{script.target}"
    blocks: list[tuple[str, Any]]
    if not tools or not body.get("stream"):
        # side requests (a title, a quota probe): a short answer, no tools
        text = f"Append a line to {script.target}"
        if not body.get("stream"):
            usage = {"input_tokens": 50, "output_tokens": 5}
            usage |= {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            content = [{"type": "text", "text": text}]
            h._json(
                200,
                {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        blocks, stop = [("text", text)], "end_turn"
    elif script.mode == "noop" or results >= 2:
        blocks, stop = [("text", script.final)], "end_turn"
    elif results == 0:
        read = ("toolu_01Read", "Read", {"file_path": path})
        blocks, stop = [("text", "Let me look at the file first."), ("tool_use", read)], "tool_use"
    else:
        edit = {
            "file_path": path,
            "old_string": script.old,
            "new_string": f"{script.old}\n{script.line}",
        }
        blocks, stop = [("tool_use", ("toolu_02Edit", "Edit", edit))], "tool_use"
    h._sse_start()
    start_usage = {
        "input_tokens": 12 + results,
        "cache_creation_input_tokens": 3000 if results == 0 else 0,
        "cache_read_input_tokens": 0 if results == 0 else 3000 + 200 * results,
        "output_tokens": 1,
    }
    message = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": []}
    message |= {"stop_reason": None, "stop_sequence": None, "usage": start_usage}
    h._sse("message_start", {"type": "message_start", "message": message})
    for index, (kind, value) in enumerate(blocks):
        if kind == "text":
            block: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": value}
        else:
            tool_id, name, arguments = value
            block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        h._sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
        h._sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
        h._sse("content_block_stop", {"type": "content_block_stop", "index": index})
    h._sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 60 + 10 * results},
        },
    )
    h._sse("message_stop", {"type": "message_stop"})


# -- OpenAI Chat Completions (pi, omp, aider, hermes) ------------------------------------
def chat(h: _Handler, body: Any, script: Script) -> None:
    msgs = body.get("messages") or []
    names = [
        (t.get("function") or {}).get("name") or t.get("name") for t in body.get("tools") or []
    ]
    step = 2 if script.mode == "noop" else sum(1 for m in msgs if m.get("role") == "tool")
    model = body.get("model", "mock-model")
    cid = new_id("chatcmpl-")
    content: str | None = None
    calls: list[tuple[str, dict[str, str], str]] = []
    where = cwd_of(body)
    if not names:
        # aider (it sends no tools) or a side request (a title)
        asked = json.dumps(msgs)[:200_000]
        if "SEARCH/REPLACE" in asked or "<<<<<<< SEARCH" in asked:
            content = script.final if script.mode == "noop" else script.aider_edit
        else:  # aider in another edit format ("whole"), or a side request: the final text
            content = script.final
    elif step == 0:
        name = _pick(names, ["read", "read_file", "Read", "bash", "terminal"]) or names[0]
        if name in ("read", "Read"):
            arguments = {"path": script.target}
        elif name == "read_file":
            arguments = {"path": f"{where}/{script.target}" if where else script.target}
        else:
            arguments = {"command": f"cat {script.target}"}
        calls = [(name, arguments, "call_read_1")]
    elif step == 1:
        name = _pick(names, ["write", "write_file", "Write"]) or names[0]
        if name in ("write", "Write"):
            arguments = {"path": script.target, "content": script.new}
        elif name == "write_file":
            target = f"{where}/{script.target}" if where else script.target
            arguments = {"path": target, "content": script.new}
        else:
            arguments = {"command": f"printf '%s\\n' '{script.line}' >> {script.target}"}
        calls = [(name, arguments, "call_write_2")]
    else:
        content = script.final
    prompt, completion = 2400 + 150 * step, 30 + 25 * step
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 2048 if step else 0},
    }
    finish = "tool_calls" if calls else "stop"
    tool_calls = [
        {"id": call_id, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for n, a, call_id in calls
    ]
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        choice = {"index": 0, "message": message, "finish_reason": finish}
        h._json(
            200,
            {
                "id": cid,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [choice],
                "usage": usage,
            },
        )
        return
    h._sse_start()
    base = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> None:
        h._sse(
            None, base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        )

    chunk({"role": "assistant", "content": ""})
    if content:
        chunk({"content": content})
    for index, call in enumerate(tool_calls):
        chunk({"tool_calls": [{"index": index, **call}]})
    chunk({}, finish)
    h._sse(None, base | {"choices": [], "usage": usage})
    h._sse(None, "[DONE]")
