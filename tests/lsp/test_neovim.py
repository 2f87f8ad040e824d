"""A real editor: Neovim headless, its built-in LSP client running `kcel lsp` on a CRD with a bad rule, reads the
diagnostic back (where `nvim` is installed: 0.7, Debian 12's, or newer)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
START = """
local config = { name = "kcel", cmd = { %(python)r, "-m", "kcel.cli", "lsp" }, root_dir = %(folder)r }
if vim.lsp.start then vim.lsp.start(config) else vim.lsp.buf_attach_client(0, vim.lsp.start_client(config)) end
"""
READ = """
vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, d.lnum .. ":" .. d.col .. ":" .. d.message:gsub("\\n.*", ""))
end
vim.fn.writefile(lines, %(out)r)
vim.cmd("qa!")
"""
SCRIPT = START + "local lines = {}\n" + READ


def _nvim(tmp_path: Path, opened: Path, script: str, **values: object) -> list[str]:
    """Neovim headless on a file, running a Lua script (START, then what the test does, then READ): the lines the
    script wrote (`line:column:message` for each diagnostic)."""
    out, lua = tmp_path / "diagnostics.txt", tmp_path / "script.lua"
    values |= {"python": sys.executable, "folder": str(tmp_path), "out": str(out)}
    lua.write_text(script % values, encoding="utf-8")
    subprocess.run(["nvim", "--headless", "--clean", str(opened), "-c", f"luafile {lua}"], cwd=ROOT, timeout=90,
                   capture_output=True, check=False)  # fmt: skip
    return out.read_text(encoding="utf-8").splitlines()


@pytest.mark.skipif(shutil.which("nvim") is None, reason="no nvim on this machine (Debian: apt install neovim)")
def test_neovim_shows_the_diagnostic_of_a_bad_rule(tmp_path: Path) -> None:
    crd = tmp_path / "crd.yaml"
    text = (ROOT / "examples" / "widget-crd.yaml").read_text(encoding="utf-8")
    crd.write_text(text.replace('"self.replicas <= self.maxReplicas"', '"self.replicas <= "'), encoding="utf-8")
    (line,) = _nvim(tmp_path, crd, SCRIPT)
    number, _, message = line.split(":", 2)
    assert "Syntax error" in message
    assert 'self.replicas <= "' in crd.read_text(encoding="utf-8").splitlines()[int(number)]


GO_SCRIPT = (
    """
local published = 0
local shown = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  published = published + 1
  return shown(err, result, ctx, config)
end
"""
    + START
    + """
vim.wait(30000, function() return published > 0 end, 50)
local lines = { "opened:" .. published .. ":" .. #vim.diagnostic.get(0) }
vim.api.nvim_buf_set_lines(0, %(line)d, %(line)d + 1, false, { %(marker)r })
"""
    + READ
)


@pytest.mark.skipif(shutil.which("nvim") is None, reason="no nvim on this machine (Debian: apt install neovim)")
def test_neovim_shows_a_marker_typo_in_go_as_it_is_typed(tmp_path: Path) -> None:
    pytest.importorskip("tree_sitter_go", reason="the kcel[go] extra (tree-sitter-go) is not installed")
    from tests.gotypes.widget import RULE, write_widget

    go_file = write_widget(tmp_path)
    lines = go_file.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines) if RULE in text)
    marker = lines[line].replace("self.maxReplicas", "self.maxReplica")  # edited in the buffer, never saved
    opened, found = _nvim(tmp_path, go_file, GO_SCRIPT, line=line, marker=marker)
    assert opened == "opened:1:0"  # published once, nothing wrong with the package as written
    number, column, message = found.split(":", 2)
    assert "undefined field 'maxReplica'" in message
    assert int(number) == line
    assert marker[int(column) :].startswith('.maxReplica"')  # inside the rule: the `.` cel-go points at
    assert not list(tmp_path.rglob("*.yaml"))  # nothing regenerated


COMPLETE = """
vim.wait(30000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50)
local lines = { "omnifunc:" .. vim.bo.omnifunc }
local position = { line = %(line)d, character = %(column)d }
local params = { textDocument = { uri = vim.uri_from_bufnr(0) }, position = position }
local answers = vim.lsp.buf_request_sync(0, "textDocument/completion", params, 30000) or {}
for _, answer in pairs(answers) do
  for _, item in ipairs((answer.result or {}).items or answer.result or {}) do table.insert(lines, item.label) end
end
vim.fn.writefile(lines, %(out)r)
vim.cmd("qa!")
"""


@pytest.mark.skipif(shutil.which("nvim") is None, reason="no nvim on this machine (Debian: apt install neovim)")
def test_the_readmes_neovim_recipe_completes_the_fields_of_self(tmp_path: Path) -> None:
    """The README's recipe for Neovim 0.7 to 0.10, as a user's init.lua (`kcel` on PATH): omnifunc is set, and
    completion after `self.` offers the schema's fields."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    recipe = readme.split("Neovim 0.7 to 0.10")[1].split("```lua\n")[1].split("```")[0]
    (tmp_path / "init.lua").write_text(recipe, encoding="utf-8")
    crd = tmp_path / "crd.yaml"
    text = (
        (ROOT / "examples" / "widget-crd.yaml")
        .read_text(encoding="utf-8")
        .replace('"self.replicas <= self.maxReplicas"', '"self."')
    )
    crd.write_text(text, encoding="utf-8")
    at = text.index('"self."') + len('"self.')
    line, column = text.count("\n", 0, at), at - text.rfind("\n", 0, at) - 1
    out, script = tmp_path / "completion.txt", tmp_path / "complete.lua"
    script.write_text(COMPLETE % {"line": line, "column": column, "out": str(out)}, encoding="utf-8")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if not (Path(sys.executable).parent / "kcel").exists():
        pytest.skip(f"no kcel script beside {sys.executable} (not an installed environment)")
    subprocess.run(["nvim", "--headless", "-u", str(tmp_path / "init.lua"), str(crd), "-c", f"luafile {script}"],
                   cwd=tmp_path, env=env, timeout=90, capture_output=True, check=False)  # fmt: skip
    found = out.read_text(encoding="utf-8").splitlines()
    assert found[0] == "omnifunc:v:lua.vim.lsp.omnifunc"
    assert {"replicas", "maxReplicas", "mode", "containers"} <= set(found[1:])
