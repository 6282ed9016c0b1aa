"""The command line's help, one way for every command: a one-line summary and a description in the
imperative, examples and the pointer to the full reference at the end, a meaningful metavar per option,
every default shown as ``(default: …)``; the renamed options' old spellings still work and say so; ``-``
for an output file is stdout; ``--help`` imports nothing heavy; and every size has one name for data,
which ``show`` says and configuration files take."""

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import textwrap

import pytest

import formal
from formal.core.symbols import by_name, info
from formal.models.presets import PRESETS
from formal.tools.cli import build_parser, main, sizes_text
from formal.tools.helptext import DOCS_POINTER, Formatter
from tests.tiers import fast_few, in_fast_tier

HEAVY = ("sympy", "numpy", "networkx", "torch", "matplotlib")


def _commands() -> dict:
    """Every command's parser, the deferred ones too, by name."""
    parser = build_parser()
    parser.format_help()                                   # registers the deferred commands
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices), {a.dest: a.help for a in sub._choices_actions}


COMMANDS, SUMMARIES = _commands()


def _options(parser):
    """The options a command's help shows (not the hidden old spellings, not -h)."""
    return [a for a in parser._actions if a.option_strings and a.help is not argparse.SUPPRESS
            and not isinstance(a, argparse._HelpAction)]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_a_summary_and_a_description_in_the_imperative(name):
    summary, description = SUMMARIES[name], COMMANDS[name].description
    assert summary and description, name
    assert summary[0].isupper() and not summary.endswith(".") and "\n" not in summary, summary
    verb = summary.split()[0]
    assert description.split()[0] == verb, (summary, description)   # one verb, one form
    assert not verb.endswith("s") or verb.endswith("ss"), verb        # "List", not "Lists"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_help_ends_with_examples_and_the_reference(name):
    text = COMMANDS[name].format_help()
    assert " ".join(text.split()).endswith(DOCS_POINTER), text[-300:]
    examples = text[text.index("examples:"):]
    assert re.search(rf"^  formal-transformers {re.escape(name)}\b", examples, re.M), examples


def test_the_examples_of_the_built_in_commands_run(capsys, tmp_path, monkeypatch):
    """An example that does not parse would teach a wrong command line: each one parses; those that need no
    file run, exit 0 (the slow ones of conform, verify, prove and check's catalogue are parsed only)."""
    monkeypatch.chdir(tmp_path)
    parser = build_parser()
    for name, sub in COMMANDS.items():
        for line in re.findall(r"^  formal-transformers (.+)$", sub.epilog, re.M):
            argv = line.split(" >")[0].split()                 # without a shell redirection
            parser.parse_args(argv)
            drawing = "--draw" in argv and importlib.util.find_spec("matplotlib") is None
            if name in ("list", "show", "complexity", "graph", "table1") and "mine.toml" not in line and not drawing:
                assert main(argv) == 0, line
    capsys.readouterr()


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_two_options_of_a_command_share_a_metavar(name):
    seen = {}
    for action in _options(COMMANDS[name]):
        if action.metavar is None or action.nargs == 0:
            continue
        other = seen.setdefault(action.metavar, action.dest)
        assert other == action.dest, (name, action.metavar, other, action.dest)
        assert len(action.metavar) > 1, (name, action.metavar)             # a word, not S or B


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_default_is_shown_one_way(name):
    """An option whose default means something shows it as ``(default: …)``; no help writes it another way."""
    formatter = Formatter(prog="formal-transformers")
    for action in _options(COMMANDS[name]):
        said = formatter._expand_help(action)
        assert not re.search(r"[(;] ?default(?!:)", said), (name, action.dest, said)
        meaningful = action.default not in (None, False, [], argparse.SUPPRESS)
        if meaningful:
            assert "default:" in said, (name, action.dest, said)


def test_memory_sizes_are_written_in_binary_units():
    for name, sub in COMMANDS.items():
        text = " ".join(sub.format_help().split())
        assert not re.search(r"\b\d+(\.\d+)?[KMGT]\b", text), (name, re.findall(r"\b\d+(?:\.\d+)?[KMGT]\b", text))


def test_graph_groups_its_flags_by_the_patterns_that_take_them():
    from formal.graphs.schema import PARAMETERS, SCHEMAS
    parser = COMMANDS["graph"]
    for group in parser._action_groups:
        if group.title in ("positional arguments", "options", "output"):
            continue
        takers = (list(SCHEMAS) if group.title == "every pattern"
                  else group.title.split(" ", 1)[1].split(", "))
        for action in group._group_actions:
            parameter = next(p for p in PARAMETERS if p.name == action.dest)
            assert [s for s in SCHEMAS if parameter.name in SCHEMAS[s].names] == takers, (group.title, action.dest)


# ------------------------------------------------------------------------------- renamed options
@pytest.mark.parametrize("old, new", [
    (["graph", "cross", "--n", "6", "--n-z", "9"], ["graph", "cross", "--seq-len", "6", "--context-len", "9"]),
    (["table1", "--n", "32", "--n", "48"], ["table1", "--measure-at", "32", "--measure-at", "48"]),
])
def test_old_spellings_still_work_and_say_so(capsys, old, new):
    assert main(new) == 0
    expected, quiet = capsys.readouterr()
    assert quiet == ""
    assert main(old) == 0
    out, err = capsys.readouterr()
    assert out == expected
    notes = err.splitlines()
    olds = sorted({a for a in old if a in ("--n", "--n-z")})
    assert len(notes) == len(olds) and all("deprecated" in line for line in notes), err   # one line per spelling
    for line, spelling in zip(notes, olds):
        assert f"{spelling} is deprecated; use --" in line


@pytest.mark.parametrize("name", list(COMMANDS))
def test_old_spellings_are_hidden(name):
    assert "--n " not in COMMANDS[name].format_help() and "--n-z" not in COMMANDS[name].format_help()


# ------------------------------------------------------------------------------- "-" is stdout
def test_verify_json_dash_prints_the_json_on_stdout(capsys, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    status = main(["verify", "--only", "attention", "--jobs", "1", "--quiet", "--json", "-"])
    out, err = capsys.readouterr()
    assert status == 0 and json.loads(out)["rows"], out[:200]
    assert "passed" in err                                 # the table, on stderr
    assert not (tmp_path / "-").exists()


def test_verify_json_file_is_written_beside_the_table(capsys, tmp_path):
    pytest.importorskip("torch")
    path = tmp_path / "report.json"
    assert main(["verify", "--only", "attention", "--jobs", "1", "--quiet", "--json", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert "passed" in out and json.loads(path.read_text())["rows"]


def test_graph_draw_dash_is_refused_in_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["graph", "causal", "--seq-len", "8", "--draw", "-"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--draw -" in err
    assert not (tmp_path / "-").exists()


def test_every_output_file_option_is_known():
    """The options that name a file written: each is tested above for "-" (a new one must be added there)."""
    written = {(name, a.dest) for name, sub in COMMANDS.items() for a in _options(sub)
               if a.metavar in ("FILE", "FILE.png") and a.nargs is None}
    assert written == {("verify", "json"), ("graph", "draw"), ("graph", "file")}   # graph --file is read


# ------------------------------------------------------------------------------- --help is fast
def _heavy_after(argv) -> list:
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from formal.tools.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main({argv!r})
            except SystemExit:
                pass
        print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], *([name, "--help"] for name in COMMANDS)])
def test_help_imports_no_heavy_module(argv):
    """``--help`` (the deferred commands listed too) imports none of sympy, numpy, networkx, torch,
    matplotlib: a property, not a timing (the time is in the README's speed section)."""
    assert _heavy_after(argv) == []


def test_help_lists_the_deferred_commands():
    from formal.tools.cli import DEFERRED
    assert set(DEFERRED) <= set(COMMANDS)


# ------------------------------------------------------------------------------- one name per size
@pytest.mark.parametrize("name", fast_few(list(formal.ALGORITHMS), keep=in_fast_tier))
def test_show_says_each_size_s_data_name(capsys, name):
    assert main(["show", name]) == 0
    out, _ = capsys.readouterr()
    algorithm = formal.ALGORITHMS[name]
    line = out.rstrip().splitlines()[-1] if algorithm.symbols else ""
    assert out.endswith(sizes_text(algorithm))
    for symbol in algorithm.symbols:
        glyph, data = info(symbol).glyph, info(symbol).name
        assert (glyph if glyph == data else f"{glyph} = {data}") in line.split("): ", 1)[1].split(", "), (name, line)


def _config(tmp_path, preset, spelled):
    lines = [f'algorithm = "{preset.algorithm}"', "[options]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in preset.options.items()]
    lines += ["[sizes]"] + [f'"{spelled(k)}" = {v}' for k, v in preset.sizes.items()]
    path = tmp_path / f"{preset.name}-{len(list(tmp_path.iterdir()))}.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_config_may_name_its_sizes_as_show_writes_them(capsys, tmp_path, preset):
    """Every preset's model, its sizes written by their data names and by their glyphs: the same report."""
    p = PRESETS[preset]
    length = ["--seq-len", str(p.seq_len or 16)]
    reports = []
    for spelled in (lambda k: k, lambda k: info(by_name(k)).glyph):
        status = main(["complexity", "--config", _config(tmp_path, p, spelled), *length, "--json"])
        out, err = capsys.readouterr()
        assert status == 0, err
        reports.append({k: v for k, v in json.loads(out).items() if k != "name"})
    assert reports[0] == reports[1]


def test_a_size_given_twice_is_refused(capsys, tmp_path):
    path = tmp_path / "han.toml"
    path.write_text('algorithm = "han"\nseq_len = 32\n[sizes]\nN_C = 5\nn_classes = 3\nN_V = 100\nd_e = 8\n'
                    'd_h = 8\nd_a = 8\nn_s = 4\n')
    assert main(["complexity", "--config", str(path)]) == 2
    _, err = capsys.readouterr()
    assert "N_C and n_classes are one size (n_classes)" in err


# ------------------------------------------------------------------------------- the docs' page
def test_the_docs_page_reads_every_command_with_literal_flags_and_example_blocks():
    from formal.tools.cli import docs_parser
    parser = docs_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS)
    for name, command in sub.choices.items():
        assert command.epilog.startswith("Examples::\n"), name              # a literal block: typed as shown
        texts = [command.description] + [a.help for a in command._actions if a.help not in (None, argparse.SUPPRESS)]
        for text in texts:
            bare = re.sub(r"``[^`]*``", "", text)
            assert not re.search(r"(?<![\w-])--[a-z]", bare), (name, text)  # else typeset with an en dash
        defaults = [a for a in _options(command) if a.default not in (None, False, [], argparse.SUPPRESS)]
        assert all("(default: " in a.help for a in defaults), name          # the docs show no other default
