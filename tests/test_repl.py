"""`kcel repl`: the session's commands, completion, and a real terminal driven through pexpect."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from kcel.repl import Session, unbalanced

ROOT = Path(__file__).resolve().parent.parent
CRD, WIDGET = "examples/widget-crd.yaml", "examples/widget.yaml"


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run(session: Session, *lines: str) -> list[str]:
    return [session.handle(line) for line in lines]


def test_values_types_lets_functions_and_declarations() -> None:
    session = Session()
    assert run(session, "1 + 1", "%let xs = [1, 2, 3]", "%let twice(n: int): int -> n * 2", "xs.map(n, twice(n))") == [
        "2 : int", "xs = [1, 2, 3] : list(int)", "defined twice(n: int): int -> n * 2", "[2, 4, 6] : list(int)",
    ]  # fmt: skip
    assert run(session, "%let limit: int = 2", "xs.filter(n, n > limit)") == ["limit = 2 : int", "[3] : list(int)"]
    assert run(session, "%let xs = [5]", "xs.filter(n, n > limit)") == ["xs = [5] : list(int)", "[5] : list(int)"]
    assert session.handle("%declare y: string") == "declared y: string"
    assert session.handle("y + 1").startswith("ERROR: <input>:1:3: found no matching overload for '_+_'")
    assert session.handle("y") == "error: no value for y (y: %let y = …)"
    refused = "error: double is a library function; give yours another name"
    assert session.handle("%let double(n: int): int -> n") == refused
    assert session.handle("%status").splitlines()[1:] == [
        "%declare y: string", "%let twice(n: int): int -> n * 2", "%let xs = [5]", "%let limit: int = 2",
    ]  # fmt: skip
    assert run(session, "%delete xs", "xs", "%reset", "limit") == [
        "deleted xs",
        "ERROR: <input>:1:1: undeclared reference to 'xs' (in container '')\n | xs\n | ^",
        "reset",
        "ERROR: <input>:1:1: undeclared reference to 'limit' (in container '')\n | limit\n | ^",
    ]


def test_a_let_that_breaks_is_refused_and_the_old_state_kept() -> None:
    session = Session()
    run(session, "%let a = 1", "%let b = a + 1")
    assert session.handle("%let a = 'x'").startswith("ERROR: <input>:1:3: found no matching overload for '_+_'")
    assert session.handle("b") == "2 : int"


def test_options_parse_compile_and_explain() -> None:
    session = Session()
    assert session.handle("quantity('1Gi').isGreaterThan(quantity('1Mi'))") == "true : bool"  # the newest API server
    assert session.handle("%option --k8s-version 1.30") == "k8s-version: 1.30"
    assert "undeclared reference to 'ip'" in session.handle("ip('1.2.3.4')")  # 1.30 offers 1.29's environment
    assert session.handle("%option --k8s-version 1.31") == "k8s-version: 1.31"
    assert session.handle("ip('1.2.3.4').family()") == "4 : int"
    assert session.handle("%option --k8s-version nope").startswith("error: ")
    assert session.handle("%option --k8s-version 1.26") == (
        "error: unsupported Kubernetes version 1.26: kcel answers as Kubernetes 1.30 to 1.37"
    )
    assert session.handle("%parse a.b + 1") == "_+_(\n  a^#1.b^#2,\n  1^#3\n)^#4"
    compiled = session.handle("%compile 1 + 2").splitlines()
    assert compiled[0] == "type: int" and compiled[1].startswith("def _kcel_eval(")
    assert session.handle("%explain [1, 2].exists(x, x > 1)").splitlines()[0].endswith("<- true at step 2")


def test_a_crd_node_types_self_and_shows_costs_against_the_limits() -> None:
    session = Session()
    assert session.handle(f"%load {CRD} --path spec") == (
        "loaded widgets.example.com v1; self and oldSelf: object at spec"
    )
    assert session.handle("self.replicas").startswith("no value for self (self: %object …) : int\ncost: not run;")
    assert "undefined field 'nope'" in session.handle("self.nope")
    assert session.handle(f"%object {WIDGET}") == f"self set from {WIDGET}"
    assert session.handle("self.replicas <= self.maxReplicas").splitlines() == [
        "false : bool",
        "cost: 5 (runtime limit 1,000,000); estimated 5..5 x 1 runs = 5 (0.00% of the 10,000,000 limit)",
    ]
    assert session.handle("%rules") == (
        'Widget.example.com "w1" is invalid: [spec: Invalid value: replicas must not exceed maxReplicas in Safe '
        "mode, spec.containers[1].image: Invalid value: images must be pinned to a tag other than latest]"
    )
    assert session.handle(f"%load {CRD} --path spec.containers[0]").endswith("object at spec.containers[0]")
    assert session.handle(f"%object {WIDGET}") == f"self set from {WIDGET}"
    lines = session.handle("self.image.contains(':')").splitlines()
    assert lines == [
        "true : bool",
        "cost: 5 (runtime limit 1,000,000); estimated 2..105 x 64 runs = 6,720 (0.07% of the 10,000,000 limit)",
    ]  # the list's maxItems: 64 above the node multiplies the estimate
    assert session.handle(f"%load {CRD} --path spec.nope") == "error: --path: the schema has no field 'nope' there"


def test_admission_mode_binds_the_admission_variables() -> None:
    session = Session()
    assert session.handle("%admission").startswith("admission mode")
    assert session.handle("oldObject == null").startswith("true : bool")
    assert session.handle("request.operation").startswith("no value for request (request: %object …) : dyn\n")
    assert session.handle("%object examples/deployment.yaml") == "object set from examples/deployment.yaml"
    assert session.handle("request.operation").startswith('"CREATE" : string')
    assert session.handle("object.spec.replicas").startswith("3 : int")
    assert session.handle("request.resource.resource").startswith('"deployments" : string')


def test_bad_input_never_ends_the_session() -> None:
    session = Session()
    assert session.handle("%bogus") == "error: unknown command %bogus; %help lists them"
    assert session.handle("%load missing.yaml") == "error: missing.yaml: no such file"
    assert session.handle("%object examples/widget.yaml").startswith("error: %object needs %load")
    assert session.handle("[1, 2].map(x, x / 0)") == "error: division by zero"
    assert session.handle("1 +").endswith(" | 1 +\n | ...^")
    with pytest.raises(EOFError):
        session.handle("%exit")


def test_completion() -> None:
    session = Session()
    run(session, f"%load {CRD} --path spec", f"%object {WIDGET}")
    assert session.completions("%lo") == ["%load"]
    assert session.completions("self.maxR") == ["maxReplicas"]
    assert {"containers", "mode", "replicas"} <= set(session.completions("self."))
    assert "startsWith" in session.completions("self.mode.")  # a string's member functions
    assert "startsWith" not in session.completions("self.")  # not an object's
    assert "exists_one" in session.completions("self.containers.all(c, exi") or "exists" in session.completions("exi")
    run(session, "%reset", "%let config = {'retries': 3}")
    assert session.completions("config.re") == ["retries"]  # keys of a value the checker only knows as a map


def test_unbalanced_brackets_continue_the_line() -> None:
    assert unbalanced("self.all(x,") and unbalanced("[1, {") and unbalanced("'abc")
    assert not unbalanced("f(')')") and not unbalanced("[1]") and not unbalanced("'''a(b'''")


def test_the_readme_transcript() -> None:
    """The REPL session in the README is what kcel prints."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```\n\$ kcel repl\n(.*?)```", readme, re.S)
    assert block is not None, "the README shows a kcel repl session"
    session, expected, actual = Session(), [], []
    for line in block.group(1).splitlines():
        if line.startswith("kcel> "):
            actual += session.handle(line[len("kcel> ") :]).splitlines()
        else:
            expected.append(line)
    assert actual == expected


def test_a_real_terminal(tmp_path: Path) -> None:
    """History, completion with Tab, multi-line input, an error with a caret, Ctrl-C and Ctrl-D."""
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
    repl = pexpect.spawn(
        sys.executable, ["-m", "kcel.cli", "repl", "--history", str(tmp_path / "history")],
        env=env, encoding="utf-8", timeout=30, dimensions=(40, 200), cwd=str(ROOT),
    )  # fmt: skip
    try:
        repl.expect_exact("kcel>")
        repl.send(f"%load {CRD} --path spec\r")
        repl.expect_exact("loaded widgets.example.com v1")
        repl.send(f"%object {WIDGET}\r")
        repl.expect_exact("self set from")
        repl.send("self.maxR\t")
        repl.expect_exact("self.maxReplicas")  # Tab completed the field name from the schema
        repl.send(" >= self.replicas\r")
        repl.expect_exact("false : bool")
        repl.send("[1,\r")  # unbalanced: Enter continues the expression
        repl.send("2]\r")
        repl.expect_exact("[1, 2] : list(int)")
        repl.send("1 +\r")
        repl.expect_exact(" | ...^")
        repl.expect_exact("kcel>")
        repl.send("unfinished")
        repl.sendcontrol("c")  # drops the line
        repl.expect_exact("kcel>")
        for _ in range(5):  # Ctrl-D exits once the new prompt has started reading keys
            repl.sendcontrol("d")
            if repl.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=2) == 0:
                break
    finally:
        repl.close()
    assert repl.exitstatus == 0
    assert "self.maxReplicas >= self.replicas" in (tmp_path / "history").read_text()


def test_deleting_what_a_definition_uses_is_refused_and_the_session_goes_on() -> None:
    session = Session()
    for line in ("%let s = 1", "%let t = s + 1"):
        session.handle(line)
    assert session.handle("%delete s") == "error: t uses s: delete that first"
    assert session.handle("1 + 1") == "2 : int"  # not stuck on `undeclared reference to 's'`
    assert session.handle("t") == "2 : int"
    assert session.handle("%delete t") == "deleted t" and session.handle("%delete s") == "deleted s"


def test_declared_types_are_checked() -> None:
    session = Session()
    assert session.handle("%let x: int = 'str'") == "error: x: expected type 'int' but found 'string'"
    assert "unknown type 'strng' (did you mean 'string'?)" in session.handle("%let y: strng = 1")
    assert "unknown type 'lst' (did you mean 'list'?)" in session.handle("%declare z: lst(int)")
    assert session.handle("%let w: dyn = 'str'") == 'w = "str" : dyn'


def test_a_loaded_rule_is_typed_and_estimated_before_any_object() -> None:
    session = Session()
    session.handle(f"%load {ROOT / 'examples' / 'widget-crd.yaml'} --path spec")
    answer = session.handle("self.replicas <= self.maxReplicas").splitlines()
    assert answer[0] == "no value for self (self: %object …) : bool"
    assert answer[1].startswith("cost: not run; estimated 5..5 x 1 runs = 5")


def test_admission_mode_binds_the_authorizer() -> None:
    session = Session()
    session.handle("%admission")
    check = 'authorizer.group("apps").resource("deployments").check("get")'
    assert session.handle(f"{check}.allowed()").splitlines()[0] == "false : bool"  # RBAC without bindings
    assert session.handle(f"{check}.reason()").splitlines()[0] == '"" : string'
