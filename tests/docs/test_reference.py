"""The documentation's generated reference against the code it documents.

* The scenario-file reference (:func:`emjax.model.reference.scenario_reference`) has a
  section for every model pydantic's own JSON schema of the scenario union reaches
  (its ``$defs``), and in it a row for every field, with the field's default and every
  constraint the JSON schema states (minimum, maximum, exclusive bounds, patterns,
  item counts, ``Literal`` choices), read from the schema, not from the generator's
  own walk.
* Every class and function the API pages document (``::: module`` in docs/api/*.md,
  each module's ``__all__`` or, without one, what it defines) has a docstring, and so
  does each public method and property defined in those classes; every public class
  and function of ``emjax.__all__`` is among them.
* The generated pages (docs/hooks.py) build: the CLI page holds every subcommand's
  help, the validation and benchmark pages README's tables.

About 2 s on one core (the JSON schemas and the imports); no run, no site build
(`make docs` builds the site with warnings as errors).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticUndefined, to_jsonable_python

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


# ------------------------------------------------------------ scenario reference


@pytest.fixture(scope="module")
def reference() -> dict[str, dict[str, str]]:
    """{model name: {field name: its table row}} parsed from the generated page."""
    from emjax.model.reference import scenario_reference

    sections: dict[str, dict[str, str]] = {}
    current = None
    for line in scenario_reference().splitlines():
        m = re.match(r"### (\w+) \{ #model-\w+ \}$", line)
        if m:
            current = sections.setdefault(m.group(1), {})
            continue
        m = re.match(r"\| `(\w+)` \|", line)
        if m and current is not None:
            current[m.group(1)] = line
    return sections


def _scenario_models() -> dict[str, type[BaseModel]]:
    """Every model of the scenario union, by the names of pydantic's JSON schema."""
    from emjax.model.base import _models
    from emjax.model.load import Scenario

    names = set(TypeAdapter(Scenario).json_schema()["$defs"])
    classes = _models()
    assert names <= set(classes), names - set(classes)
    return {n: classes[n] for n in sorted(names)}


def _g(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _schema_phrases(node, out: list[str]) -> None:
    """The constraints a JSON schema node states, as the reference words them; other
    models ($ref) are their own sections."""
    if isinstance(node, list):
        for n in node:
            _schema_phrases(n, out)
        return
    if not isinstance(node, dict):
        return
    for key, sym in (("exclusiveMinimum", ">"), ("minimum", "≥"),
                     ("exclusiveMaximum", "<"), ("maximum", "≤")):
        if key in node:
            out.append(f"{sym} {_g(node[key])}")
    if "pattern" in node:
        out.append(f"matches `{node['pattern']}`")
    if "prefixItems" not in node:  # a fixed-length tuple's counts are its type
        for key, word in (("minItems", "at least"), ("maxItems", "at most")):
            if key in node:
                n = node[key]
                out.append(f"{word} {n} item" + ("" if n == 1 else "s"))
    for choice in node.get("enum", []) + ([node["const"]] if "const" in node else []):
        out.append(f"`{json.dumps(choice)}`")
    for key, sub in node.items():
        if key in ("items", "anyOf", "oneOf", "allOf", "prefixItems", "additionalProperties"):
            _schema_phrases(sub, out)


def test_every_model_of_every_scenario_has_a_section(reference):
    models = _scenario_models()
    assert {"FDTD3D", "FDTD2D", "FDFD3D", "DGATD", "PlaneWave", "Voxels", "DebyePole",
            "MeshFile", "Rectangle"} <= set(models)
    assert set(reference) == set(models), (set(models) ^ set(reference))


def test_every_field_with_its_default_and_constraints(reference):
    checked = 0
    for name, cls in _scenario_models().items():
        rows = reference[name]
        assert list(rows) == list(cls.model_fields), name  # every field, in order
        schema = cls.model_json_schema()
        props = schema["properties"]
        for field_name, field in cls.model_fields.items():
            row = rows[field_name]
            if field.default_factory is not None:
                default = f"`{json.dumps(to_jsonable_python(field.default_factory()))}`"
            elif field.default is PydanticUndefined:
                default = "required"
            elif field.default is None:
                default = "unset"
            else:
                default = f"`{json.dumps(to_jsonable_python(field.default))}`"
            cells = [c.strip() for c in row.strip("|").split(" | ")]
            assert cells[2] == default, (name, field_name, row)
            phrases: list[str] = []
            _schema_phrases(props[field_name], phrases)
            for p in phrases:
                assert p in row, f"{name}.{field_name}: {p!r} missing from {row}"
            if field.description:
                assert field.description.split()[0].strip("`[") in row, (name, field_name)
            checked += 1
    assert checked > 250


def test_types_link_to_their_sections(reference):
    from emjax.model.reference import scenario_reference

    text = scenario_reference()
    for target in set(re.findall(r"\]\(#(model-\w+)\)", text)):
        assert f"{{ #{target} }}" in text, target
    assert "[GaussianPulse](#model-gaussianpulse)" in reference["PointDipole"]["waveform"]


# ------------------------------------------------------------------ API pages


def _documented() -> list[tuple[str, object]]:
    """(identifier, object) of every ``::: identifier`` on the API pages."""
    out = []
    for page in sorted((DOCS / "api").glob("*.md")):
        for ident in re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), re.M):
            try:
                obj = importlib.import_module(ident)
            except ModuleNotFoundError:
                mod, _, attr = ident.rpartition(".")
                obj = getattr(importlib.import_module(mod), attr)
            out.append((ident, obj))
    return out


def _members(ident: str, obj) -> list[tuple[str, object]]:
    """The public classes and functions a ``:::`` directive renders."""
    if not inspect.ismodule(obj):
        return [(ident, obj)]
    if ident == "emjax":  # rendered without members; its names are checked below
        return []
    names = getattr(obj, "__all__", None)
    if names is None:
        names = [n for n, v in vars(obj).items() if not n.startswith("_")
                 and (inspect.isclass(v) or inspect.isfunction(v))
                 and v.__module__ == obj.__name__]
    found = [(f"{ident}.{n}", getattr(obj, n)) for n in names]
    return [(n, v) for n, v in found if inspect.isclass(v) or inspect.isfunction(v)]


def _own_doc(obj) -> str:
    """The object's own docstring (no inherited one, no dataclass signature)."""
    doc = (obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__) or ""
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and doc.startswith(
            f"{obj.__name__}("):
        return ""
    return doc.strip()


def _public_methods(cls) -> list[tuple[str, object]]:
    """Public methods and properties of ``cls`` and of its emjax bases (private bases'
    members are rendered as the class's own)."""
    out = []
    items = [kv for base in reversed(cls.__mro__) if base.__module__.startswith("emjax")
             for kv in vars(base).items()]
    for name, attr in dict(items).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, property):
            attr = attr.fget
        elif isinstance(attr, classmethod | staticmethod):
            attr = attr.__func__
        if inspect.isfunction(attr):
            out.append((name, attr))
    return out


def test_every_documented_class_and_function_has_a_docstring():
    missing, count = [], 0
    for ident, obj in _documented():
        for name, member in _members(ident, obj):
            count += 1
            if not _own_doc(member):
                missing.append(name)
            if inspect.isclass(member) and member.__module__.startswith("emjax"):
                for meth, fn in _public_methods(member):
                    count += 1
                    if not (fn.__doc__ or "").strip():
                        missing.append(f"{name}.{meth}")
    assert count > 200
    assert not missing, f"no docstring: {missing}"


def test_every_public_name_of_emjax_is_in_the_api_reference():
    import emjax

    rendered = {id(member) for ident, obj in _documented() for _, member in _members(ident, obj)}
    absent = []
    for name in emjax.__all__:
        obj = getattr(emjax, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in rendered:
            absent.append(name)
    assert not absent, f"emjax names missing from docs/api: {absent}"


# ------------------------------------------------------------- generated pages


def test_generated_pages():
    pytest.importorskip("mkdocs", reason="the docs extra (make docs installs it)")
    spec = importlib.util.spec_from_file_location("emjax_docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    pages = hooks.generated_pages()
    from emjax.cli import build_parser

    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices
               and "run" in a.choices)
    for command in sub.choices:
        assert f"## emjax {command}\n" in pages["reference/cli.md"], command
    assert "--checkpoint-every" in pages["reference/cli.md"]
    assert "| case | what is checked | result | limit |" in pages["validation.md"]
    assert "| seed benchmark |" in pages["benchmarks.md"]
    assert pages["benchmarks-record.md"].startswith("# Benchmarks")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for path in pages:
        assert path in nav, f"{path} is generated but not in the nav"
