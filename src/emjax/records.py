"""The rows that ``emjax validate`` and ``emjax bench`` print: one typed record each.

A validation case returns :class:`Check` records, printed as
``{"case", "metric", "value", "limit", "bound", "unit", "pass"}``; a benchmark case returns
:class:`Measurement` records, printed as ``{"case", "size", "metric", "value", "unit",
"device"}``. Both are frozen dataclasses derived from :class:`Record`, which reads as the
JSON mapping it prints (``r["pass"]``, ``r.get("limit")``, ``dict(r)``), so a case
written before this module (plain dicts) and one written after print alike. A failed
case becomes one record with ``metric="error"`` and the message in ``error``; anything
else a record carries (the devices of a sharded run, iteration counts) goes in
``extra`` and is printed after the standard keys.

Also here, since both :mod:`emjax.validation` and :mod:`emjax.bench` use them and
neither imports the other: how a package of cases is collected (:func:`collect_cases`)
and called with the command's options (:func:`call_case`), and the device a record
names (:func:`device_name`, :func:`on_gpu`). JAX is imported only when those two run.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar


def _float(v: Any) -> float | None:
    return None if v is None else float(v)


@dataclass(frozen=True)
class Record(Mapping[str, Any]):
    """The base of :class:`Check` and :class:`Measurement`: the JSON form and the
    read-only mapping over it, ``error`` and ``extra``. Each subclass declares its fields
    (every one has case, metric, value, unit) and names its JSON keys in ``KEYS``
    (attribute ``passed`` prints as "pass")."""

    KEYS: ClassVar[tuple[str, ...]] = ("case", "metric", "value", "unit")
    _ATTR: ClassVar[dict[str, str]] = {"pass": "passed"}

    error: str | None = field(default=None, kw_only=True)
    """Set only on the record that stands for a case that raised: its message."""
    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)
    """Further JSON-able facts printed after the standard keys (devices, iterations)."""

    def to_json(self) -> dict[str, Any]:
        """The record as the command prints it: standard keys, ``extra``, ``error``."""
        out = {k: getattr(self, self._ATTR.get(k, k)) for k in self.KEYS}
        out.update({k: v for k, v in self.extra.items() if k not in out})
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Record:
        """The record that :meth:`to_json` printed as ``data`` (from a subprocess, a file)."""
        std = {cls._ATTR.get(k, k): data[k] for k in cls.KEYS if k in data}
        extra = {k: v for k, v in data.items() if k not in cls.KEYS and k != "error"}
        return cls(**std, error=data.get("error"), extra=extra)

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())


BOUNDS = ("<=", ">=", "<", ">")
"""How a :class:`Check`'s value compares with its limit (``bound``), besides an interval."""


@dataclass(frozen=True)
class Check(Record):
    """One validation result: ``value`` against ``limit`` (None: no limit), ``passed``.

    ``bound`` says how the case compares them, so that the limit prints as it is checked:
    ``"<="`` (the default: an error at most ``limit``), ``">="``, ``"<"``, ``">"``, or an
    interval ``(lo, hi)`` that the value must lie in, ``limit`` then being the value
    expected (an observed order 2.0 within (1.8, 2.2)).
    """

    KEYS: ClassVar[tuple[str, ...]] = ("case", "metric", "value", "limit", "bound", "unit",
                                       "pass")

    case: str
    metric: str
    value: float | None
    limit: float | None
    unit: str
    passed: bool
    bound: str | tuple[float, float] = field(default="<=", kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _float(self.value))
        object.__setattr__(self, "limit", _float(self.limit))
        object.__setattr__(self, "passed", bool(self.passed))
        if not isinstance(self.bound, str):
            lo, hi = (float(b) for b in self.bound)
            object.__setattr__(self, "bound", (lo, hi))
        elif self.bound not in BOUNDS:
            raise ValueError(f"bound {self.bound!r} is not one of {BOUNDS} or a (lo, hi) pair")

    @property
    def limit_text(self) -> str:
        """The limit as checked: ``"<= 0.005"``, ``">= 1.7"``, ``"[1.8, 2.2]"``, or "-"."""
        return limit_text(self.limit, self.bound)

    @classmethod
    def failure(cls, case: str, message: str) -> Check:
        """The failing record that stands for a case that raised ``message``."""
        return cls(case, "error", None, None, "", False, error=message)


def limit_text(limit: float | None, bound: Any = "<=") -> str:
    """A :class:`Check`'s limit as it is checked (see ``Check.bound``); also for the plain
    dicts older cases return, whose bound is the default ``"<="``."""
    if bound is not None and not isinstance(bound, str):
        lo, hi = bound
        return f"[{lo:.4g}, {hi:.4g}]"
    if limit is None or limit != limit:  # none, or NaN
        return "-"
    return f"{bound or '<='} {limit:.4g}"


@dataclass(frozen=True)
class Measurement(Record):
    """One benchmark figure: ``value`` in ``unit`` at ``size`` (cells, DoFs, "-") on
    ``device`` (default :func:`device_name`, the first JAX device)."""

    KEYS: ClassVar[tuple[str, ...]] = ("case", "size", "metric", "value", "unit", "device")

    case: str
    size: Any
    metric: str
    value: float | None
    unit: str
    device: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _float(self.value))
        if self.device is None:
            object.__setattr__(self, "device", device_name())

    @classmethod
    def failure(cls, case: str, message: str) -> Measurement:
        """The record that stands for a benchmark case that raised ``message``; it names
        no device (JAX itself may be what failed)."""
        rec = cls(case, None, "error", None, "", device="", error=message)
        object.__setattr__(rec, "device", None)
        return rec


# ------------------------------------------------------------------ devices


def device_name() -> str:
    """``platform:kind`` of JAX's first device, as the records carry it."""
    import jax

    d = jax.devices()[0]
    return f"{d.platform}:{getattr(d, 'device_kind', '')}"


def on_gpu() -> bool:
    """True when JAX's default backend is an accelerator (sizes are cut on the CPU)."""
    import jax

    return jax.default_backend() not in ("cpu",)


# -------------------------------------------------------------------- cases

Case = Callable[..., list]
"""A case: keyword options it declares (``figures``, ...) -> list of records."""


def collect_cases(package: str, modules: tuple[str, ...], what: str) -> dict[str, Case]:
    """The ``CASES`` of each submodule of ``package``, merged; a name given twice raises."""
    cases: dict[str, Case] = {}
    for name in modules:
        mod = importlib.import_module(f"{package}.{name}")
        clash = set(cases) & set(mod.CASES)
        if clash:
            raise RuntimeError(f"{what} cases defined twice: {sorted(clash)}")
        cases.update(mod.CASES)
    return cases


def call_case(fn: Case, **options: Any) -> list:
    """``fn`` called with those of ``options`` that it declares as parameters.

    The command passes the same options (an output folder, sizes) to every case it runs;
    a case takes the ones it names and its own defaults stand for the rest. A case's
    ``**kw`` (scenario overrides it hands on) takes none of them: only named parameters
    do.
    """
    params = inspect.signature(fn).parameters
    named = {k for k, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return fn(**{k: v for k, v in options.items() if k in named})


__all__ = ["BOUNDS", "Case", "Check", "Measurement", "Record", "call_case", "collect_cases",
           "device_name", "limit_text", "on_gpu"]
