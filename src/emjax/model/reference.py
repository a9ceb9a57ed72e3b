"""The scenario-file reference, generated from the models: models in, Markdown out.

:func:`scenario_reference` walks every model reachable from the four scenario kinds
(:data:`SCENARIOS`), through their fields and the members of every union, and writes
one section per model: its ``type`` tag, its docstring, and one table row per field
with the field's type, default, allowed values (``gt``/``ge``/``lt``/``le``, lengths,
patterns, ``Literal`` choices, at any nesting depth) and description (the unit is in
it: every quantity is SI). The documentation site builds its page from it
(``docs/hooks.py``), so the reference cannot drift from the code; ``tests/docs`` checks
that every field of every model appears. Pure: it reads class attributes only.

Rules a field validator checks in code (a domain's ``spacing`` > 0, names that are
safe file names, cross-object rules) are not in the constraints column; most
descriptions state them in words.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from collections.abc import Iterator
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

from .dga import DGATD
from .fdfd import FDFD3D
from .scenario import FDTD3D
from .scenario2d import FDTD2D

SCENARIOS: tuple[type[BaseModel], ...] = (FDTD3D, FDTD2D, FDFD3D, DGATD)
"""The scenario kinds, the roots of the walk (the ``type`` key of a scenario file)."""

GROUPS: dict[str, str] = {
    "scenario": "Domain and structures (FDTD3D)",
    "scenario2d": "FDTD2D objects",
    "fdfd": "FDFD3D objects",
    "dga": "DGATD objects and meshes",
    "geometry": "Geometry",
    "media": "Media",
    "dispersion": "Dispersive media",
    "sources": "Sources",
    "waveforms": "Waveforms",
    "monitors": "Monitors",
    "boundaries": "Boundaries",
}
"""Section title of the models of each ``emjax.model`` module, in page order."""

_BOUNDS = (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤"))


def reachable_models(roots: tuple[type[BaseModel], ...] = SCENARIOS) -> list[type[BaseModel]]:
    """Every model class reachable from ``roots`` through field annotations (unions,
    lists, tuples, dicts, ``Annotated`` included), roots first, then in discovery order."""
    seen: list[type[BaseModel]] = []
    todo = list(roots)
    while todo:
        cls = todo.pop(0)
        if cls in seen:
            continue
        seen.append(cls)
        for field in cls.model_fields.values():
            todo += [m for m in _models_in(field.annotation) if m not in seen]
    return seen


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _models_in(tp: Any) -> Iterator[type[BaseModel]]:
    if _is_model(tp):
        yield tp
        return
    if get_origin(tp) is Literal:
        return
    for arg in get_args(tp):
        if not isinstance(arg, FieldInfo):
            yield from _models_in(arg)


def anchor(cls: type) -> str:
    """The HTML id of a model's section."""
    return "model-" + cls.__name__.lower()


def constraints(field: FieldInfo) -> list[str]:
    """A field's allowed values as short phrases: ``"> 0"``, ``"≤ 1"``, ``"one of ..."``,
    ``"each item: matches ..."`` (constraints inside lists and tuples, with a prefix)."""
    return _meta_phrases(field.metadata, "") + _type_phrases(field.annotation, "")


def _meta_phrases(metadata: list[Any], prefix: str) -> list[str]:
    out = []
    for m in metadata:
        if isinstance(m, FieldInfo):
            out += _meta_phrases(m.metadata, prefix)
            continue
        for attr, sym in _BOUNDS:
            v = getattr(m, attr, None)
            if v is not None:
                out.append(f"{prefix}{sym} {_num(v)}")
        lo, hi = getattr(m, "min_length", None), getattr(m, "max_length", None)
        if lo is not None:
            out.append(f"{prefix}at least {_items(lo)}")
        if hi is not None:
            out.append(f"{prefix}at most {_items(hi)}")
        if getattr(m, "multiple_of", None) is not None:
            out.append(f"{prefix}multiple of {_num(m.multiple_of)}")
        if getattr(m, "pattern", None):
            out.append(f"{prefix}matches `{m.pattern}`")
    return out


def _type_phrases(tp: Any, prefix: str) -> list[str]:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _meta_phrases(list(args[1:]), prefix) + _type_phrases(args[0], prefix)
    if origin is Literal:
        return [f"{prefix}one of " + ", ".join(f"`{json.dumps(a)}`" for a in args)]
    if origin in (Union, types.UnionType):
        return [p for a in args for p in _type_phrases(a, prefix)]
    if origin in (list, tuple, set, frozenset, dict):
        inner = args[1:] if origin is dict else [a for a in args if a is not Ellipsis]
        out: list[str] = []
        for a in inner:
            out += [p for p in _type_phrases(a, prefix or "each item: ") if p not in out]
        return out
    return []


def type_name(tp: Any) -> str:
    """A field's type for people: ``float``, ``(float, float, float)``, ``list of
    [Box](#model-box) or ...``; models link to their sections; ``or`` joins unions."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return type_name(args[0])
    if origin is Literal:
        return "string" if all(isinstance(a, str) for a in args) else "literal"
    if origin in (Union, types.UnionType):
        names = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(names) + (" or unset" if type(None) in args else "")
    if origin in (list, set, frozenset):
        return f"list of {type_name(args[0])}"
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {type_name(args[0])}"
        return "(" + ", ".join(type_name(a) for a in args) + ")"
    if origin is dict:
        return f"table of {type_name(args[0])} to {type_name(args[1])}"
    if _is_model(tp):
        return f"[{tp.__name__}](#{anchor(tp)})"
    if tp is type(None):
        return "unset"
    return {str: "string", bool: "boolean"}.get(tp, getattr(tp, "__name__", str(tp)))


def default_text(field: FieldInfo) -> str:
    """The default as a scenario file writes it (JSON), ``required`` or ``unset``
    (leave the key out)."""
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "unset"
    return "`" + json.dumps(to_jsonable_python(value), ensure_ascii=False) + "`"


def _items(n: int) -> str:
    return f"{n} item" + ("" if n == 1 else "s")


def _num(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _cell(text: str) -> str:
    """Text safe in one Markdown table cell: one line, ``|`` escaped outside code spans
    (inside them the table reads it as text, and an escape would show)."""
    parts = re.split(r"(`+[^`]*`+)", " ".join(text.split()))
    return "".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def _plain(doc: str) -> str:
    """A docstring or description in Markdown: Sphinx roles (``:class:`X```) as code,
    brackets outside code escaped (``[i][j]`` is no Markdown link)."""
    doc = re.sub(r":(?:class|func|meth|mod|data|attr|exc):`~?([^`]+)`", r"``\1``", doc)
    parts = re.split(r"(`+[^`]*`+)", doc)
    return "".join(p if i % 2 else p.replace("[", "\\[") for i, p in enumerate(parts)).strip()


def _tag(cls: type[BaseModel]) -> str | None:
    field = cls.model_fields.get("type")
    if field is not None and get_origin(field.annotation) is Literal:
        return str(get_args(field.annotation)[0])
    return None


def model_section(cls: type[BaseModel]) -> str:
    """One model's section: heading, tag, docstring, field table."""
    lines = [f"### {cls.__name__} {{ #{anchor(cls)} }}", ""]
    tag = _tag(cls)
    if tag is not None:
        lines += [f'`type = "{tag}"`', ""]
    doc = inspect.getdoc(cls)
    if doc and doc != inspect.getdoc(BaseModel) and not doc.startswith("!!! abstract"):
        lines += [_plain(doc), ""]
    lines += ["| field | type | default | allowed | description |",
              "|---|---|---|---|---|"]
    for name, field in cls.model_fields.items():
        allowed = "; ".join(constraints(field)) or "—"
        desc = _plain(field.description or "") or _described_by_type(name, field.annotation)
        lines.append(f"| `{name}` | {_cell(type_name(field.annotation))} | "
                     f"{_cell(default_text(field))} | {_cell(allowed)} | {_cell(desc)} |")
    return "\n".join(lines) + "\n"


def _described_by_type(name: str, tp: Any) -> str:
    """For a field without a description: the tag's role, the one model's first
    docstring paragraph, or how a union's member is chosen."""
    if name == "type":
        return "The tag that selects this class in a file."
    models = list(_models_in(tp))
    if len(models) == 1:
        doc = inspect.getdoc(models[0]) or ""
        return _plain(doc.split("\n\n")[0])
    if models:
        return "Each object names its `type`, one of the types listed."
    return ""


def scenario_reference(roots: tuple[type[BaseModel], ...] = SCENARIOS) -> str:
    """The whole reference page in Markdown: the scenarios, then every other reachable
    model grouped by the module that defines it (:data:`GROUPS`)."""
    models = reachable_models(roots)
    out = [
        "# Scenario-file reference",
        "",
        "Generated from the pydantic models of `emjax.model` when the site is built "
        "(`emjax.model.reference`), so it is what the code accepts. A scenario file is "
        "TOML or JSON with the fields below; its top-level `type` picks the kind "
        '(`"FDTD3D"` when absent), and every object of a polymorphic field names its '
        "`type`. Units are SI throughout: metres, seconds, hertz, siemens per metre, "
        "ohms, volts, amperes. Unknown keys are refused. *unset* means the key may be "
        "left out (no value); *required* keys must be given.",
        "",
        "## Scenarios",
        "",
    ]
    out += [model_section(cls) for cls in roots]
    rest = [m for m in models if m not in roots]

    def group(cls: type) -> str:
        return cls.__module__.rsplit(".", 1)[-1]

    order = list(GROUPS) + sorted({group(m) for m in rest} - set(GROUPS))
    for key in order:
        members = [m for m in rest if group(m) == key]
        if members:
            out += [f"## {GROUPS.get(key, key)}", ""]
            out += [model_section(cls) for cls in members]
    return "\n".join(out)
