"""Workspace containment (WorkspaceRoot) and the read-only file tools."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_brain.agent.tools import AgentToolRegistry, ToolError
from jupyter_brain.tools import WorkspaceRoot, default_tools, file_tools


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOP SECRET needle\n")
    return folder


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "sales.csv").write_text("region,amount\nnorth,10\nsouth,20\n")
    (ws / "notes.md").write_text("# Notes\nneedle in notes\n")
    (ws / "link_out").symlink_to(outside, target_is_directory=True)
    (ws / "secret_link.txt").symlink_to(outside / "secret.txt")
    (ws / "link_in").symlink_to(ws / "data", target_is_directory=True)
    return ws


@pytest.fixture
def tools(root: Path) -> dict:
    return {spec.name: spec for spec in file_tools(root)}


# WorkspaceRoot -----------------------------------------------------------------
def test_resolves_paths_inside_the_root(root: Path) -> None:
    ws = WorkspaceRoot(root)
    assert ws.resolve("data/sales.csv") == root / "data" / "sales.csv"
    assert ws.resolve(".") == root
    assert ws.resolve("") == root
    assert ws.resolve("data/../notes.md") == root / "notes.md"
    assert ws.resolve(str(root / "notes.md")) == root / "notes.md"
    assert ws.resolve("link_in/sales.csv") == root / "data" / "sales.csv"
    assert ws.resolve("not/yet/there.txt") == root / "not" / "yet" / "there.txt"


def test_ordinary_unusual_names_are_allowed(root: Path) -> None:
    ws = WorkspaceRoot(root)
    for name in ["données.csv", "データ.txt", "report%20v2.txt", "100%.txt", "run:2024.csv", "dots..txt", "...txt"]:
        assert ws.resolve(name) == root / name


ATTACKS = [
    ("../outside/secret.txt", "'..'"),
    ("data/../../outside/secret.txt", "'..'"),
    ("../ws/notes.md", "'..'"),
    ("/etc/passwd", "absolute path"),
    ("//etc/passwd", "absolute path"),
    ("link_out/secret.txt", "symlink"),
    ("secret_link.txt", "symlink"),
    ("link_out", "symlink"),
    ("%2e%2e/outside/secret.txt", "percent-encoded"),
    ("%2E%2E%2Foutside", "percent-encoded"),
    ("..%2foutside", "percent-encoded"),
    ("%252e%252e/outside", "percent-encoded"),
    ("%c0%ae%c0%ae/outside", "percent-encoded"),
    ("notes.md\x00.png", "NUL"),
    ("notes\n.md", "control"),
    ("\u202enotes.md", "control"),
    ("a\u200b/notes.md", "control"),
    ("\uff0e\uff0e/outside/secret.txt", "look-alike"),
    ("\u2025/outside/secret.txt", "look-alike"),
    ("..\uff0foutside", "look-alike"),
    ("..\u2215outside", "look-alike"),
    ("\u2024\u2024/outside", "look-alike"),
    ("..\\outside\\secret.txt", "backslash"),
    ("C:/Windows/win.ini", "drive letter"),
    ("c:secret.txt", "drive letter"),
    ("~/secret.txt", "'~'"),
]


@pytest.mark.parametrize(("attack", "reason"), ATTACKS)
def test_refuses_escapes_with_a_clear_message(root: Path, attack: str, reason: str) -> None:
    ws = WorkspaceRoot(root)
    with pytest.raises(ToolError) as info:
        ws.resolve(attack)
    message = str(info.value)
    assert reason in message
    assert "must stay inside the workspace root" in message
    assert str(root.resolve()) in message


def test_absolute_path_that_climbs_out_of_the_root_is_refused(root: Path, outside: Path) -> None:
    ws = WorkspaceRoot(root)
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.resolve(f"{root}/../outside/secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.resolve(str(outside / "secret.txt"))


def test_root_given_through_a_symlink_accepts_its_own_spelling(tmp_path: Path, root: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    ws = WorkspaceRoot(alias)
    assert ws.root == root.resolve()
    assert ws.resolve(str(alias / "notes.md")) == root / "notes.md"


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        WorkspaceRoot(tmp_path / "missing")


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> WorkspaceRoot:
    base = tmp_path_factory.mktemp("fuzz")
    (base / "out").mkdir()
    ws = base / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "f.txt").write_text("x")
    (ws / "up").symlink_to(base / "out", target_is_directory=True)
    (ws / "a" / "loop").symlink_to(ws / "a" / "loop")
    (ws / "a" / "parent").symlink_to(base, target_is_directory=True)
    (ws / "a" / "self").symlink_to(ws, target_is_directory=True)
    return WorkspaceRoot(ws)


SEGMENTS = st.sampled_from(
    ["..", ".", "", "a", "b", "f.txt", "up", "loop", "parent", "self", "out", "ws",
     "%2e%2e", "%2f", "\uff0e\uff0e", "\u2025", "..\\..", "C:", "~", "\x00", "\u202e", "é"]
)


def _assert_inside(ws: WorkspaceRoot, text: str) -> None:
    try:
        resolved = ws.resolve(text)
    except ToolError as exc:
        assert "workspace root" in str(exc)
        return
    real = Path(os.path.realpath(resolved))
    assert real == ws.root or real.is_relative_to(ws.root), (text, real)
    assert resolved == ws.root or resolved.is_relative_to(ws.root), (text, resolved)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(SEGMENTS, max_size=8), absolute=st.booleans())
def test_fuzz_composed_paths_stay_inside(fuzz_root: WorkspaceRoot, parts: list[str], absolute: bool) -> None:
    text = "/".join(parts)
    if absolute:
        text = f"{fuzz_root.root}/{text}"
    _assert_inside(fuzz_root, text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=40))
def test_fuzz_arbitrary_text_stays_inside(fuzz_root: WorkspaceRoot, text: str) -> None:
    _assert_inside(fuzz_root, text)


# list_files ----------------------------------------------------------------------
def test_list_files_shows_sizes_and_skips_noise(root: Path, tools: dict) -> None:
    for noise in [".git", "__pycache__", ".ipynb_checkpoints", ".venv", "node_modules", ".jupyter_brain"]:
        (root / noise).mkdir()
        (root / noise / "junk.txt").write_text("junk")
    out = tools["list_files"]()
    assert "data/" in out
    assert "notes.md  24 B" in out
    assert "link_in -> data/" in out
    assert "link_out -> (symlink pointing outside the workspace)" in out
    for noise in [".git", "__pycache__", ".ipynb_checkpoints", ".venv", "node_modules", ".jupyter_brain", "junk"]:
        assert noise not in out
    assert "sales.csv" not in out  # not recursive


def test_list_files_recursive_with_pattern(root: Path, tools: dict) -> None:
    (root / "data" / "deep").mkdir()
    (root / "data" / "deep" / "more.csv").write_text("x\n")
    out = tools["list_files"](".", "*.csv", True)
    assert "data/sales.csv" in out
    assert "data/deep/more.csv" in out
    assert "notes.md" not in out
    # symlinked folders are not followed, so the outside secret never shows up
    assert "secret.txt" not in tools["list_files"](".", "*", True)
    assert "No entries matching '*.xlsx'" in tools["list_files"](".", "*.xlsx", True)


def test_list_files_caps_entries(root: Path, tools: dict) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(250):
        (many / f"f{i:03}.txt").write_text("")
    out = tools["list_files"]("many")
    assert "many/ — 250 entries" in out
    assert out.count("\n") == 201
    assert "… (50 more; narrow with path or pattern)" in out


def test_list_files_missing_folder_suggests_close_names(tools: dict) -> None:
    with pytest.raises(ToolError, match=r"'dta' does not exist.*Did you mean: data"):
        tools["list_files"]("dta")


def test_list_files_refuses_escape(tools: dict) -> None:
    with pytest.raises(ToolError, match="workspace root"):
        tools["list_files"]("../outside")


# read_file -----------------------------------------------------------------------
def test_read_file_numbers_lines(tools: dict) -> None:
    out = tools["read_file"]("data/sales.csv")
    assert out.splitlines() == [
        "data/sales.csv (lines 1–3 of 3)",
        "     1\tregion,amount",
        "     2\tnorth,10",
        "     3\tsouth,20",
    ]


def test_read_file_pages_and_says_what_remains(root: Path, tools: dict) -> None:
    (root / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    out = tools["read_file"]("long.txt", 10, 5)
    assert out.startswith("long.txt (lines 10–14 of 1000)")
    assert "    10\tline 10" in out and "    14\tline 14" in out and "line 15" not in out
    assert out.endswith("[986 more lines (max_lines=5); continue with start_line=15]")
    tail = tools["read_file"]("long.txt", 998)
    assert "(lines 998–1000 of 1000)" in tail and "more lines" not in tail
    with pytest.raises(ToolError, match="has only 1000 lines; start_line 2000 is past the end"):
        tools["read_file"]("long.txt", 2000)


def test_read_file_stops_at_output_budget(root: Path, tools: dict) -> None:
    (root / "wide.txt").write_text(("x" * 900 + "\n") * 100)
    out = tools["read_file"]("wide.txt")
    assert len(out) < 12_000
    assert "output size limit reached); continue with start_line=" in out


def test_read_file_clips_very_long_lines(root: Path, tools: dict) -> None:
    (root / "one.json").write_text("[" + "1," * 5000 + "1]")
    out = tools["read_file"]("one.json")
    assert "more chars)" in out and len(out) < 1_200


def test_read_file_refuses_binary_with_a_hint(root: Path, tools: dict) -> None:
    (root / "table.parquet").write_bytes(b"PAR1\x00\x01\x02binary")
    with pytest.raises(ToolError, match=r"table.parquet is a binary file .*pandas.read_parquet"):
        tools["read_file"]("table.parquet")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ToolError, match="binary file"):
        tools["read_file"]("blob.bin")


def test_read_file_decodes_legacy_text(root: Path, tools: dict) -> None:
    (root / "old.txt").write_bytes("café crème\n".encode("latin-1"))
    out = tools["read_file"]("old.txt")
    assert "café crème" in out and "decoded as latin-1" in out


def test_read_file_refuses_folders_missing_files_and_escapes(tools: dict) -> None:
    with pytest.raises(ToolError, match="is a folder; use list_files"):
        tools["read_file"]("data")
    with pytest.raises(ToolError, match=r"Did you mean: data/sales.csv"):
        tools["read_file"]("data/sale.csv")
    for attack in ["secret_link.txt", "link_out/secret.txt", "../outside/secret.txt", "%2e%2e/outside/secret.txt"]:
        with pytest.raises(ToolError, match="workspace root"):
            tools["read_file"](attack)


def _notebook(root: Path) -> Path:
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Sales analysis\n", "Load the data."]},
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": 1,
                "source": "import pandas as pd\ndf = pd.read_csv('data/sales.csv')\ndf['amount'].sum()",
                "outputs": [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                             "data": {"text/plain": ["30"]}}],
            },
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": 2,
                "source": ["df['missing']"],
                "outputs": [{"output_type": "error", "ename": "KeyError", "evalue": "'missing'", "traceback": []}],
            },
        ],
    }
    path = root / "analysis.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    return path


def test_read_file_renders_notebook_cells(root: Path, tools: dict) -> None:
    _notebook(root)
    out = tools["read_file"]("analysis.ipynb")
    assert "(notebook, 3 cells; outputs summarised)" in out
    assert "\t# %% [markdown] (cell 1)" in out
    assert "\t# Sales analysis" in out
    assert "\t# %% (cell 2)" in out
    assert "\tdf = pd.read_csv('data/sales.csv')" in out
    assert "\t# out: 30" in out
    assert "\t# out (error): KeyError: 'missing'" in out
    assert '"cell_type"' not in out and '"source"' not in out


def test_read_file_shows_broken_notebook_as_text(root: Path, tools: dict) -> None:
    (root / "broken.ipynb").write_text("{not json")
    out = tools["read_file"]("broken.ipynb")
    assert "not a valid notebook" in out and "{not json" in out


# search_files ----------------------------------------------------------------------
def test_search_files_literal(tools: dict) -> None:
    out = tools["search_files"]("north")
    assert out.splitlines()[0] == "data/sales.csv:2: north,10"
    assert "1 match in" in out


def test_search_files_never_reads_outside(tools: dict) -> None:
    out = tools["search_files"]("needle")
    assert "notes.md:2: needle in notes" in out
    assert "SECRET" not in out and "secret" not in out.split("[")[0]
    with pytest.raises(ToolError, match="workspace root"):
        tools["search_files"]("needle", "link_out")


def test_search_files_regex_case_and_glob(root: Path, tools: dict) -> None:
    assert "data/sales.csv:3: south,20" in tools["search_files"](r"s\w+th,\d+", regex=True)
    assert "No matches" in tools["search_files"]("NORTH")
    assert "data/sales.csv:2" in tools["search_files"]("NORTH", ignore_case=True)
    only_md = tools["search_files"]("e", glob="*.md")
    assert "notes.md" in only_md and "sales.csv" not in only_md
    assert "data/sales.csv" in tools["search_files"]("north", "data/sales.csv")


def test_search_files_bad_regex_is_a_tool_error(tools: dict) -> None:
    with pytest.raises(ToolError, match=r"invalid regular expression '\(unclosed'.*regex=false"):
        tools["search_files"]("(unclosed", regex=True)
    assert "No matches" in tools["search_files"]("(unclosed")  # literal search is fine
    with pytest.raises(ToolError, match="must not be empty"):
        tools["search_files"]("")


def test_search_files_caps_results_and_skips_binary_and_noise(root: Path, tools: dict) -> None:
    (root / "many.txt").write_text("hit\n" * 100)
    (root / "blob.bin").write_bytes(b"hit\x00hit")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("hit\n")
    out = tools["search_files"]("hit", max_results=5)
    assert out.count("many.txt:") == 5
    assert "stopped early" in out
    full = tools["search_files"]("hit", max_results=500)
    assert full.count("many.txt:") == 100
    assert "blob.bin" not in full.split("[")[0] and ".git" not in full
    assert "skipped" in full


def test_search_files_notebook_lines_match_read_file(root: Path, tools: dict) -> None:
    _notebook(root)
    out = tools["search_files"]("read_csv", glob="*.ipynb")
    first = out.splitlines()[0]
    assert first.startswith("analysis.ipynb:")
    line_no = int(first.split(":")[1])
    page = tools["read_file"]("analysis.ipynb", line_no, 1)
    assert "read_csv" in page.splitlines()[1]


# wiring ----------------------------------------------------------------------------
def test_default_tools_are_registered_with_their_effects(root: Path) -> None:
    registry = AgentToolRegistry(default_tools({}, root))
    assert set(registry.names()) == {
        "list_variables", "inspect_variable", "run_python", "list_files", "read_file", "search_files",
        "write_file", "edit_file",
    }
    for name in ["list_variables", "inspect_variable", "list_files", "read_file", "search_files"]:
        assert registry.get(name).effect == "read"
        assert registry.permission_for(name) == "allow"
    assert registry.get("run_python").effect == "execute"
    assert registry.permission_for("run_python") == "ask"


def test_schema_validation_rejects_out_of_range_arguments(tools: dict) -> None:
    model = tools["read_file"].args_model
    with pytest.raises(Exception):
        model(path="x", start_line=0)
    with pytest.raises(Exception):
        model(path="x", max_lines=5000)
    assert model(path="x").max_lines == 400


def test_huge_trees_are_walked_only_so_far(root: Path, tools: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_brain.tools import files

    monkeypatch.setattr(files, "MAX_WALK_ENTRIES", 10)
    many = root / "many"
    many.mkdir()
    for i in range(30):
        (many / f"f{i:02}.txt").write_text("hit\n")
    listing = tools["list_files"]("many")
    assert listing.startswith("many/ — 10+ entries (stopped after looking at 10 entries)")
    found = tools["search_files"]("hit", "many", max_results=500)
    assert found.count("hit") == 10 and "stopped early" in found


def test_read_file_refuses_special_files(root: Path, tools: dict) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        tools["read_file"]("pipe")


# containment hardening -------------------------------------------------------------
CONTAINMENT = [
    ("dotdot", "../outside/secret.txt", "'..' segments climb above the workspace root"),
    ("dotdot-deep", "a/b/../../../outside", "'..' segments climb above the workspace root"),
    ("absolute", "/etc/passwd", "absolute path outside the workspace"),
    ("home", "~/.ssh/id_rsa", "'~' (home folder) is not expanded here"),
    ("home-user", "~root/.bashrc", "'~' (home folder) is not expanded here"),
    ("symlink-file", "secret_link.txt", "symlink that points outside"),
    ("symlink-parent", "link_out/secret.txt", "symlink that points outside"),
    ("symlink-parent-new-file", "link_out/new/file.txt", "symlink that points outside"),
    ("nul", "notes.md\x00.txt", "NUL byte"),
    ("percent-dotdot", "%2e%2e/outside/secret.txt", "percent-encoded '%2e'"),
    ("percent-slash", "..%2Foutside", "percent-encoded '%2F'"),
    ("percent-double", "%252e%252e/outside", "percent-encoded '%25'"),
    ("backslash", "..\\outside\\secret.txt", "backslash"),
    ("backslash-only", "data\\sales.csv", "backslash"),
    ("drive", "C:/Windows/win.ini", "Windows drive letter"),
    ("drive-relative", "d:secret.txt", "Windows drive letter"),
    ("unc", "//server/share/x", "absolute path"),
    ("too-long", "a/" * 600 + "x", "too long (1201 characters; the limit is 1024)"),
    ("long-name", "n" * 256, "names is too long (256 bytes; the limit is 255 per name)"),
    ("long-name-utf8", "\u00e9" * 128, "names is too long (256 bytes"),
    ("fullwidth-dots", "\uff0e\uff0e/outside/secret.txt", "look-alike of path syntax '.'"),
    ("fullwidth-slash", "..\uff0foutside", "look-alike of path syntax '/'"),
    ("two-dot-leader", "\u2025/outside", "look-alike of path syntax '..'"),
    ("one-dot-leader", "\u2024\u2024/outside", "look-alike of path syntax '.'"),
    ("division-slash", "..\u2215outside", "look-alike of path syntax"),
    ("fullwidth-backslash", "..\uff3coutside", "look-alike of path syntax '\\\\'"),
    ("small-full-stop", "\ufe52\ufe52/outside", "look-alike of path syntax '.'"),
    ("fullwidth-tilde", "\uff5e/x", "look-alike of path syntax '~'"),
    ("fullwidth-colon", "C\uff1a/x", "look-alike of path syntax ':'"),
    ("rtl-override", "\u202etxt.md", "control or invisible character U+202E"),
    ("zero-width", "a\u200b/../../outside", "control or invisible character U+200B"),
]


@pytest.mark.parametrize(("attack", "rule"), [c[1:] for c in CONTAINMENT], ids=[c[0] for c in CONTAINMENT])
def test_containment_rules_are_named(root: Path, attack: str, rule: str) -> None:
    with pytest.raises(ToolError) as info:
        WorkspaceRoot(root).resolve(attack)
    message = str(info.value)
    assert message.startswith("Refused path ")
    assert rule in message
    assert "must stay inside the workspace root" in message


@pytest.mark.parametrize("name", ["ok/" * 300 + "x", "n" * 255, "\u00e9" * 127])
def test_long_but_legal_paths_are_accepted(root: Path, name: str) -> None:
    assert WorkspaceRoot(root).resolve(name) == root / name


def test_symlinked_parent_folder_inside_the_root_is_fine(root: Path) -> None:
    ws = WorkspaceRoot(root)
    assert ws.resolve("link_in/new/file.txt") == root / "data" / "new" / "file.txt"


def test_symlink_chain_that_ends_outside_is_refused(root: Path, outside: Path) -> None:
    (root / "hop1").symlink_to(root / "hop2")
    (root / "hop2").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="symlink that points outside"):
        WorkspaceRoot(root).resolve("hop1")


def test_refusals_reach_the_model_through_every_file_tool(root: Path) -> None:
    specs = {spec.name: spec for spec in default_tools({}, root)}
    attempts = {
        "read_file": {"path": "link_out/secret.txt"},
        "list_files": {"path": "%2e%2e"},
        "search_files": {"query": "SECRET", "path": "\uff0e\uff0e/outside"},
        "write_file": {"path": "link_out/new.txt", "content": "x"},
        "edit_file": {"path": "../outside/secret.txt", "old": "TOP", "new": "X"},
    }
    for name, args in attempts.items():
        with pytest.raises(ToolError, match="Refused path"):
            specs[name](**args)
