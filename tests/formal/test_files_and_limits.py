"""What the package reads and writes, and how much memory it may take: each hostile case one clear error."""

import os
import threading

import pytest

from formal.engine.options import parse_options
from formal.errors import ConfigError, ResourceError
from formal.guards import limits
from formal.guards.files import MAX_NESTING, destination, read_text, read_toml, write_text


# ------------------------------------------------------------------------------------------- reading
def test_a_directory_a_fifo_and_a_device_are_refused_without_reading(tmp_path):
    """A FIFO with no writer would block ``open``; /dev/zero would be read forever: both are refused from
    ``fstat`` at once (the test would hang otherwise)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, kind in ((tmp_path, "a directory"), (fifo, "a FIFO"), ("/dev/zero", "a character device")):
        with pytest.raises(ConfigError, match=f"is not a regular file \\({kind}"):
            read_text(path, what="config file")


def test_a_link_to_a_device_is_judged_by_what_it_points_to(tmp_path):
    link = tmp_path / "zero.toml"
    link.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="character device"):
        read_toml(link)


def test_a_missing_file_and_a_file_over_the_cap(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file .*: no such file"):
        read_text(tmp_path / "nope.toml", what="config file")
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 1025)
    with pytest.raises(ConfigError, match="larger than 1,024 bytes"):
        read_text(big, max_bytes=1024)
    assert read_text(big, max_bytes=1025) == "#" * 1025


def test_bytes_that_are_not_utf8_name_their_offset(tmp_path):
    path = tmp_path / "latin.toml"
    path.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=r"is not UTF-8 text \(byte 11 is b'\\xe9'\)"):
        read_toml(path)


@pytest.mark.parametrize("depth, ok", [(MAX_NESTING - 1, True), (MAX_NESTING + 1, False), (5000, False)])
def test_toml_nesting_is_bounded(tmp_path, depth, ok):
    """5000 nested arrays once ended in a 3000-line RecursionError."""
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * depth + "]" * depth + "\n")
    if ok:
        assert read_toml(path)["x"] is not None
    else:
        with pytest.raises(ConfigError, match="nests arrays or tables deeper than"):
            read_toml(path)


def test_an_integer_too_long_to_convert_is_a_config_error(tmp_path):
    path = tmp_path / "long.toml"
    path.write_text("n = " + "9" * 5000 + "\n")
    with pytest.raises(ConfigError, match="holds a number that cannot be read"):
        read_toml(path)


# ------------------------------------------------------------------------------------------- writing
@pytest.mark.parametrize("make, message", [
    (lambda t: t / "missing" / "out.json", "does not exist"),
    (lambda t: t, "it is a directory"),
    (lambda t: "/proc/self/out.json", "is not writable"),
    (lambda t: "/sys/out.json", "is not writable"),
    (lambda t: "/dev/null", "not a regular file"),
    (lambda t: "", "not a usable path"),
])
def test_an_output_path_that_cannot_be_written_is_refused_before_any_work(tmp_path, make, message):
    with pytest.raises(ConfigError, match=message):
        destination(make(tmp_path), what="JSON report")


def test_writing_is_atomic_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    write_text(target, "new")
    assert target.read_text() == "new" and sorted(os.listdir(tmp_path)) == ["report.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ConfigError, match="Permission denied"):
        write_text(target, "new")
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["report.json"]


# ------------------------------------------------------------------------------------------- limits
@pytest.mark.parametrize("text, value", [("1", 1), ("4G", 4 * 2**30), ("512MiB", 512 * 2**20), ("1.5g", 3 * 2**29),
                                         ("2 KB", 2048), (" 7t ", 7 * 2**40), (10, 10)])
def test_memory_sizes_are_parsed(text, value):
    assert limits.parse_size(text) == value


@pytest.mark.parametrize("text", ["", "abc", "0", "-1", "1e999", "4 GG", "nan", True, "9" * 100, "0.1"])
def test_bad_memory_sizes_are_config_errors(text):
    with pytest.raises(ConfigError, match="memory size"):
        limits.parse_size(text)


def test_the_limit_is_scoped_to_its_context_and_its_thread():
    assert limits.max_memory() == limits.DEFAULT_MAX_MEMORY
    seen = []
    with limits.memory_limit("1M"):
        assert limits.max_memory() == 2**20
        with pytest.raises(ResourceError, match=r"about 2 MiB, more than the memory limit of 1 MiB") as caught:
            limits.require(2 * 2**20, "two mebibytes")
        assert (caught.value.needed, caught.value.limit) == (2 * 2**20, 2**20)
        thread = threading.Thread(target=lambda: seen.append(limits.max_memory()))
        thread.start()
        thread.join()
    assert limits.max_memory() == limits.DEFAULT_MAX_MEMORY and seen == [limits.DEFAULT_MAX_MEMORY]
    limits.require(limits.DEFAULT_MAX_MEMORY, "exactly the limit")


# ------------------------------------------------------------------------------------------- options
@pytest.mark.parametrize("name, texts, expected", [
    ("attention", ["empty=nan"], {"empty": "nan"}),
    ("attention", ["empty=error", "bias=FALSE"], {"empty": "error", "bias": False}),
    ("layer_norm", ["eps=1e-5", "norm=rms"], {"eps": 1e-5, "norm": "rms"}),
    ("layer_norm", ["eps=0"], {"eps": 0.0}),
    ("mhattention", ["n_kv_heads=2"], {"n_kv_heads": 2}),
    ("mhattention", ["n_kv_heads=symbolic"], {"n_kv_heads": "symbolic"}),
    ("dtransformer", ["position=none"], {"position": "none"}),
    ("dinference", ["tau=1e-30", "kv_cache=true"], {"tau": 1e-30, "kv_cache": True}),
])
def test_option_values_take_the_type_of_the_option(name, texts, expected):
    options = parse_options(name, texts)
    assert options == expected and all(type(options[k]) is type(v) for k, v in expected.items())


@pytest.mark.parametrize("name, texts, message", [
    ("attention", ["bias=yes"], "takes true or false, got 'yes'"),
    ("layer_norm", ["eps=tiny"], "takes a number, got 'tiny'"),
    ("attention", ["bias=true", "bias=true"], "given twice"),
    ("attention", ["heads=2"], "attention has no option 'heads'"),
    ("attention", ["=2"], "must be KEY=VALUE"),
    ("attention", ["bias"], "must be KEY=VALUE"),
    ("attention", ["x" * 5000 + "=1"], "attention has no option"),
    ("layer_norm", ["eps=" + "9" * 5000], "takes a number"),
])
def test_bad_option_values_name_the_option(name, texts, message):
    with pytest.raises(ConfigError, match=message) as caught:
        parse_options(name, texts)
    assert len(str(caught.value)) < 400
