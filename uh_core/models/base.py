"""Model bases and the one loader that turns YAML + pydantic errors into located messages."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict

from uh_core.errors import NotFoundError, ValidationError
from uh_core.shown import clip
from uh_core.yamldoc import Loc, YamlDocument, parse_yaml
from uh_core.yamllimits import YamlLimitError, check_size


class Strict(BaseModel):
    """A model whose unknown keys are errors (a typo there would change what gates)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class Plain(BaseModel):
    """A model with pydantic's defaults, its schema built on first use (like every model here:
    a process pays only for the models it reads)."""

    model_config = ConfigDict(defer_build=True)


class Open(BaseModel):
    """A model that keeps unknown keys (compat with files written by other tools)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


M = TypeVar("M", bound=BaseModel)


def format_loc(loc: Loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(document)"


def _allowed_keys(model: type[BaseModel], loc: Loc) -> list[str]:
    """Field names (and aliases) of the submodel at ``loc`` (for 'did you mean')."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return []
        annotation = fields[part].annotation
        current = _first_model(annotation)
        if current is None:
            return []
    fields = getattr(current, "model_fields", {})
    names = list(fields)
    names += [f.alias for f in fields.values() if f.alias]
    return names


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def _describe(error: Any, model: type[BaseModel]) -> tuple[Loc, str, str]:
    """(location, what is wrong, how to fix) for one pydantic error."""
    loc: Loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and "[" in p))
    kind = error["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        allowed = _allowed_keys(model, loc[:-1])
        close = difflib.get_close_matches(key, allowed, n=1)
        fix = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
        return loc, f"unknown key '{key}'", fix
    if kind == "missing":
        return loc, "required key is missing", f"add '{loc[-1]}'"
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    fix = "see `uh-core schema` for the expected shape"
    if "; fix: " in message:
        message, fix = message.split("; fix: ", 1)
    elif "Input should be" in message:
        fix = message[message.index("Input should be") :].replace("Input should be", "use", 1)
        message = f"invalid value {clip(repr(error.get('input')))}"
    return loc, message, fix


def problem_line(display: str, doc: YamlDocument | None, loc: Loc, what: str, fix: str) -> str:
    pos = doc.position(loc) if doc is not None else None
    where = f"{display}:{pos.line}:{pos.column}" if pos else display
    return f"{where}: {clip(format_loc(loc))}: {clip(what)} (fix: {clip(fix)})"


def validate_document(doc: YamlDocument, model: type[M], display: str) -> M:
    """Validate parsed YAML against ``model``; every problem becomes one located line."""
    problems = [
        problem_line(display, doc, loc, "duplicate key", "keep only one of them")
        for loc, _pos in doc.duplicates
    ]
    if not isinstance(doc.data, dict):
        kind = "empty" if doc.data is None else f"a {type(doc.data).__name__}"
        problems.append(
            problem_line(display, doc, (), f"document is {kind}", "write a YAML mapping")
        )
        raise ValidationError(problems)
    try:
        result = model.model_validate(doc.data)
    except pydantic.ValidationError as exc:
        for error in exc.errors():
            loc, what, fix = _describe(error, model)
            problems.append(problem_line(display, doc, loc, what, fix))
        raise ValidationError(problems) from None
    if problems:
        raise ValidationError(problems)
    return result


def read_document(path: Path, display: str) -> YamlDocument:
    try:
        check_size(path.stat().st_size)  # before reading it: a huge file is not read at all
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"{display}: no such file") from None
    except UnicodeDecodeError as exc:
        raise ValidationError(
            [f"{display}: byte {exc.start}: not UTF-8 text (fix: save the file as UTF-8)"]
        ) from None
    except OSError as exc:
        raise ValidationError([f"{display}: cannot read: {exc.strerror}"]) from None
    except YamlLimitError as exc:
        raise ValidationError([f"{display}: (document): refused: {exc}"]) from None
    try:
        return parse_yaml(text)
    except YamlLimitError as exc:
        raise ValidationError([f"{display}: (document): refused: {exc}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{display}:{mark.line + 1}:{mark.column + 1}" if mark else display
        problem = getattr(exc, "problem", None) or str(exc)
        raise ValidationError(
            [f"{where}: (document): YAML syntax error: {problem} (fix: correct the YAML there)"]
        ) from None


def load_yaml_model(path: Path, model: type[M], display: str | None = None) -> M:
    shown = display or str(path)
    return validate_document(read_document(path, shown), model, shown)
