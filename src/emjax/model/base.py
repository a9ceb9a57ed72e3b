"""The one base model every scenario object derives from (frozen, strict keys).

Numbers must be finite: NaN and infinities are refused everywhere (``allow_inf_nan``
off) except in fields that say otherwise (a box may be infinitely long). Float fields
also take quantities with units ("6 ns", "1 GHz"), converted to SI before validation
(:mod:`emjax.model.units`).
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Tag,
    ValidationError,
    model_validator,
)

from ..errors import SetupError
from .units import convert_fields

Vec3 = tuple[float, float, float]
"""A point or vector in metres, (x, y, z)."""

Component = Annotated[
    str, Field(pattern=r"^(Ex|Ey|Ez|Hx|Hy|Hz)$", description="Field component name.")
]
Axis = Annotated[str, Field(pattern=r"^[xyz]$", description="Cartesian axis: 'x', 'y' or 'z'.")]

AXES = ("x", "y", "z")

NAME_RULE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")
"""Scenario and monitor names: 1 to 100 letters, digits, '_', '-' or '.', not starting
with '.'. They become file names in the output folder, so nothing else is allowed."""


def _check_name(value: str) -> str:
    if not NAME_RULE.fullmatch(value):
        raise ValueError(
            f"name {value[:120]!r}{'...' if len(value) > 120 else ''} is not allowed: use 1 to "
            "100 letters, digits, '_', '-' or '.', not starting with '.' (names become file "
            "names in the output folder)")
    return value


Name = Annotated[str, AfterValidator(_check_name)]
"""A name that is safe as a file name in the output folder (:data:`NAME_RULE`)."""


class EmModel(BaseModel):
    """Frozen, validated, self-describing: unknown keys are refused."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        validate_default=True,
        populate_by_name=False,
        ser_json_inf_nan="constants",
        allow_inf_nan=False,
    )

    @model_validator(mode="before")
    @classmethod
    def _quantities(cls, data: Any) -> Any:
        """Strings with units ("6 ns", "2.5 mm") in float fields become SI numbers, checked
        against the unit the field's description names (:mod:`emjax.model.units`)."""
        return convert_fields(cls, data)


# ------------------------------------------------------------ messages for users


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the choices closest to a mistyped ``word`` (difflib),
    else ``""``."""
    names = [str(c) for c in choices]
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.75) or [
        c for c in names if len(word) >= 3 and word.lower() in c.lower()][:3]  # 'Dipole'
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _models() -> dict[str, type[BaseModel]]:
    """Every EmModel subclass by class name (the root of an error's title or loc)."""
    out: dict[str, type[BaseModel]] = {}
    todo: list[type[BaseModel]] = [EmModel]
    while todo:
        cls = todo.pop()
        out.setdefault(cls.__name__, cls)
        todo += cls.__subclasses__()
    return out


def _bare(tp: Any) -> Any:
    """``tp`` without ``Annotated`` and without ``| None``."""
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        elif get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp):
            rest = [a for a in get_args(tp) if a is not type(None)]
            tp = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
        else:
            return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _tag(cls: Any) -> str | None:
    """The ``type`` tag of a model in a discriminated union, else None."""
    field = cls.model_fields.get("type") if _is_model(cls) else None
    if field is not None and get_origin(field.annotation) is Literal:
        return str(get_args(field.annotation)[0])
    return None


def _members(union: Any) -> dict[str, Any]:
    """A union's members by every name pydantic may give them in a ``loc``: the ``type``
    tag, a discriminator's ``Tag``, the class name."""
    out: dict[str, Any] = {}
    for m in get_args(union):
        bare = _bare(m)
        names = [_tag(bare), getattr(bare, "__name__", None)]
        names += [t.tag for t in getattr(m, "__metadata__", ()) if isinstance(t, Tag)]
        out.update({n: bare for n in names if n})
    return out


# pydantic's names for the members of a union it tried ("float", "tuple[float, float]",
# "function-after[_check(), Box]"): never a key a user wrote
_LABEL = re.compile(r"[\[\](),]|^(int|float|str|bool|none|list|tuple|dict|set|bytes)$")


def _walk(loc: tuple, root: Any) -> tuple[str, Any, Any]:
    """The path a user wrote (``structures[0].medium.eps_r``) for pydantic's ``loc``
    (``FDTD3D.structures.0.medium.Medium.eps_r``), the model holding its last key, and
    the type found there. Union tags and member names only repeat the ``type`` key or
    name pydantic's internals: they are left out."""
    tp, model, path = root, None, ""
    for p in loc:
        tp = _bare(tp)
        if get_origin(tp) in (Union, types.UnionType):  # pydantic names the member tried
            tp = _members(tp).get(p)
            continue
        if tp is None and isinstance(p, str) and p in _models():  # the scenario kind's tag
            tp = _models()[p]
            continue
        if tp is None and isinstance(p, str) and _LABEL.search(p):
            continue
        if _is_model(tp):
            model = tp
            tp = tp.model_fields[p].annotation if p in tp.model_fields else None
        elif get_origin(tp) in (list, tuple) and isinstance(p, int):
            args = [a for a in get_args(tp) if a is not Ellipsis]
            tp = args[min(p, len(args) - 1)] if args else None
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        else:
            tp = model = None
        path += f"[{p}]" if isinstance(p, int) else (f".{p}" if path else str(p))
    return path, model, tp


def _shown(value: Any) -> str | None:
    """A short text for an input value; None for a whole object (a table)."""
    if isinstance(value, dict):
        return None
    text = repr(tuple(value) if isinstance(value, list) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _problem(e: dict, model: Any, tp: Any) -> tuple[str | None, str]:
    """The value shown and what is wrong / allowed, for one pydantic error ``e``."""
    kind, value, ctx = e["type"], e.get("input"), e.get("ctx") or {}
    if kind == "missing":
        return None, "required, not given"
    if kind == "extra_forbidden":
        allowed = list(model.model_fields) if model is not None else []
        key = str(e["loc"][-1])
        hint = did_you_mean(key, allowed) or (
            f"; allowed keys: {', '.join(allowed)}" if allowed else "")
        return _shown(value), f"unknown key{hint}"
    if kind == "union_tag_invalid":
        tags = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        return repr(ctx.get("tag")), (f"unknown type{did_you_mean(str(ctx.get('tag')), tags)}"
                                      f" (allowed: {', '.join(tags)})")
    if kind == "union_tag_not_found":
        tags = list(_members(_bare(tp))) if tp is not None else []
        return None, ("no 'type' key; give one of " + ", ".join(tags) if tags
                      else "no 'type' key; give one")
    msg = str(e["msg"])
    for prefix in ("Value error, ", "Assertion failed, ", "Input "):
        msg = msg.removeprefix(prefix)
    return _shown(value), msg


def format_validation_error(err: ValidationError) -> str:
    """The problems of a pydantic error, one line each: ``path = value: what is allowed``.

    The path is the one written in the scenario file, without pydantic's union and tag
    names; a mistyped key or type tag gets the closest allowed names. A model check that
    finds several problems gives one line each (they are joined by newlines).
    """
    root = _models().get(err.title)
    lines: list[str] = []
    last: tuple = ()
    for e in err.errors(include_url=False):
        path, model, tp = _walk(tuple(e["loc"]), root)
        value, msg = _problem(e, model, tp)
        if e["type"] == "union_tag_invalid":
            path = f"{path}.type" if path else "type"
        where = path + (f" = {value}" if value is not None else "")
        if last and last[0] == where and last[1] != e["loc"]:
            lines[-1] += f", or {msg}"  # the members of a union pydantic tried, each's rule
            continue
        lines += [f"{where}: {part}" if where else part for part in msg.split("\n")]
        last = (where, e["loc"])
    n = len(lines)
    title = "the scenario" if root is None or "domain" in root.model_fields else err.title
    return f"{n} problem{'s' if n != 1 else ''} in {title}:\n" + "\n".join(
        f"  {line}" for line in lines)


class ScenarioValidationError(ValidationError, SetupError):
    """A scenario that fails validation: pydantic's ``ValidationError`` (``errors()``
    as ever) and an emjax :class:`~emjax.errors.SetupError`, whose message is
    :func:`format_validation_error`'s. The error pydantic raised is its ``__cause__``."""

    def __str__(self) -> str:
        return format_validation_error(self)

    @classmethod
    def of(cls, err: ValidationError) -> ScenarioValidationError:
        """The same problems as ``err``, with the message for users."""
        return cls.from_exception_data(err.title, err.errors())
