"""Parser limits (issue #19, item 4): scenario documents nested deeper than
MAX_NESTING (64) levels or larger than MAX_DOCUMENT_BYTES (64 MiB) are refused with
one SetupError naming the limit, before the parsers recurse (JSON and TOML ended in
RecursionError thousands deep; tomllib takes quadratic time in a dotted key's length),
and the command line answers them with exit 2 and one line."""

from __future__ import annotations

import time

import pytest

import emjax as em
from emjax.cli import main
from emjax.errors import SetupError
from emjax.model.load import MAX_DOCUMENT_BYTES, MAX_NESTING

DEEP = 10_000
HEAD = 'name = "deep"\nsteps = 2\n'

DEEP_DOCUMENTS = {
    "json-arrays": ('{"name": "deep", "x": ' + "[" * DEEP + "]" * DEEP + "}", ".json"),
    "json-objects": ('{"x": ' * DEEP + "1" + "}" * DEEP, ".json"),
    "json-mixed": ('{"x": ' + '[{"y": ' * (DEEP // 2) + "1" + "}]" * (DEEP // 2) + "}",
                   ".json"),
    "toml-inline-arrays": (HEAD + "x = " + "[" * DEEP + "]" * DEEP + "\n", ".toml"),
    "toml-inline-tables": (HEAD + "x = " + "{ a = " * DEEP + "1" + " }" * DEEP + "\n",
                           ".toml"),
    "toml-dotted-key": (HEAD + "x" + ".a" * DEEP + " = 1\n", ".toml"),
    "toml-quoted-dotted-key": (HEAD + "x" + '."a b"' * DEEP + " = 1\n", ".toml"),
    "toml-table-header": (HEAD + "[x" + ".a" * DEEP + "]\nb = 1\n", ".toml"),
}


def _one_clear_refusal(err: pytest.ExceptionInfo) -> str:
    msg = str(err.value)
    assert f"limit of {MAX_NESTING} levels" in msg, msg
    assert "\n" not in msg and len(msg) < 400, msg
    return msg


@pytest.mark.parametrize("kind", sorted(DEEP_DOCUMENTS))
def test_deep_nesting_is_refused_before_parsing(kind):
    text, _ = DEEP_DOCUMENTS[kind]
    t0 = time.perf_counter()
    with pytest.raises(SetupError) as err:
        em.load_scenario(text)
    assert time.perf_counter() - t0 < 1.0  # the scan, not a quadratic parse
    assert err.value.__context__ is None  # refused before a parser ran, not caught after
    msg = _one_clear_refusal(err)
    assert ("10000 deep" in msg or "10001 deep" in msg
            or f"dotted key of more than {MAX_NESTING} parts" in msg), msg


@pytest.mark.parametrize("kind", ["json-arrays", "toml-inline-tables", "toml-dotted-key"])
def test_deep_files_are_refused_with_their_name(tmp_path, kind):
    text, suffix = DEEP_DOCUMENTS[kind]
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    with pytest.raises(SetupError) as err:
        em.load_scenario(path)
    assert f"scenario file '{path}'" in _one_clear_refusal(err)


def test_nesting_at_the_limit_passes_the_scan():
    """64 levels reach the model (which refuses the unknown key), 65 do not."""
    for n, refused in ((MAX_NESTING, False), (MAX_NESTING + 1, True)):
        json_text = '{"x": ' + "[" * (n - 1) + "]" * (n - 1) + "}"
        toml_text = "x" + ".a" * (n - 1) + " = 1\n"  # n parts
        for text in (json_text, toml_text):
            with pytest.raises((SetupError, ValueError)) as err:
                em.load_scenario(text)
            assert (f"limit of {MAX_NESTING} levels" in str(err.value)) == refused, (n, text)


def test_brackets_in_strings_and_comments_do_not_count():
    deep = "[{" * 100
    toml = (f'# a comment {deep}\nname = "ok"\nsteps = 2\n'
            '[domain]\nsize = [4e-3, 4e-3, 4e-3]\nspacing = 1e-3\n[boundary]\ntype = "PEC"\n'
            f'[[structures]]\nmedium = {{ type = "Medium", name = "{deep}\\"{deep}", '
            'eps_r = 2.0 }\n'
            '[structures.geometry]\ntype = "Box"\nsize = [1e-3, 1e-3, 1e-3]\n')
    sim = em.load_scenario(toml)
    assert sim.structures[0].medium.name.startswith("[{[{")
    ml = toml.replace(f'# a comment {deep}\n', f'# {deep}\n').replace(
        'name = "ok"', f'name = "ok"\nx_note = """\n{deep}\n"""', 1)
    with pytest.raises(ValueError, match="x_note") as err:  # the model's unknown key
        em.load_scenario(ml)
    assert "limit of" not in str(err.value)
    json_text = sim.model_dump_json()
    assert em.load_scenario(json_text) == sim


def test_huge_documents_are_refused_before_reading(tmp_path):
    path = tmp_path / "huge.toml"
    with open(path, "wb") as f:  # a sparse file: no disk written, no memory used
        f.truncate(MAX_DOCUMENT_BYTES + 1)
    with pytest.raises(SetupError) as err:
        em.load_scenario(path)
    msg = str(err.value)
    assert f"scenario file '{path}' is 64.0 MiB, more than the limit of 64 MiB" in msg, msg
    assert "Voxels.file" in msg
    text = 'name = "x"\n' + " " * MAX_DOCUMENT_BYTES
    with pytest.raises(SetupError, match=r"scenario text is 64\.0 MiB, more than the limit"):
        em.load_scenario(text)


def test_deep_dicts_end_in_a_validation_error_not_recursion():
    """A dict built in Python skips the text scan; the model refuses it where it first
    goes wrong, without recursing into it (load_scenario also turns a RecursionError of
    validation into a SetupError)."""
    deep: object = 1
    for _ in range(DEEP):
        deep = {"a": deep}
    for doc in ({"name": "x", "x": deep}, {"type": "DGATD", "mesh": deep},
                {"name": "x", "domain": deep}):
        with pytest.raises(ValueError):  # a RecursionError is no ValueError
            em.load_scenario(doc)


@pytest.mark.parametrize("kind", ["json-arrays", "toml-inline-arrays", "toml-dotted-key"])
def test_cli_answers_deep_documents_with_one_line(tmp_path, capsys, kind):
    text, suffix = DEEP_DOCUMENTS[kind]
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    assert main(["run", str(path), "-o", str(tmp_path / "out.h5")]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("emjax run: error: "), err
    assert f"limit of {MAX_NESTING} levels" in lines[0] and "Traceback" not in err
    assert not (tmp_path / "out.h5").exists()


def test_cli_answers_a_huge_document_with_one_line(tmp_path, capsys):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(MAX_DOCUMENT_BYTES + 1)
    assert main(["run", str(path), "-o", str(tmp_path / "out.h5")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "more than the limit of 64 MiB" in lines[0], lines
