"""`Program.explain`: every subexpression's value, and what decided `&&`, `||`, `?:` and macros."""

from __future__ import annotations

import kcel
from kcel.eval.trace import MAX_EVENTS

ENV = kcel.Env(variables={"self": "dyn"})
POD = {"replicas": 3, "max": 5, "containers": [{"image": "r/a"}, {"image": "docker.io/b"}, {"image": "r/c"}]}


def explain(expression: str, value: object = POD) -> kcel.eval.trace.Explanation:
    return ENV.compile(expression).explain({"self": value})


def test_the_operand_that_decided_and_is_marked() -> None:
    text = explain("self.replicas > self.max && self.containers.size() > 0").text()
    assert text.splitlines() == [
        "self.replicas > self.max && self.containers.size() > 0 = false",
        "├─ self.replicas > self.max = false   <- decided &&",
        "│  ├─ self.replicas = 3",
        "│  └─ self.max = 5",
        "└─ self.containers.size() > 0  (not evaluated)",
    ]


def test_a_macro_shows_the_step_that_decided_it() -> None:
    explanation = explain("self.containers.all(c, c.image.startsWith('r/'))")
    assert explanation.value is False and explanation.error is None
    lines = explanation.text().splitlines()
    assert lines[0].endswith("= false   <- false at step 2")
    assert lines[-2] == '└─ c.image.startsWith("r/") = false   <- step 2 of 3: c = {"image": "docker.io/b"}'
    assert lines[-1] == '   └─ c.image = "docker.io/b"'


def test_exists_and_exists_one() -> None:
    assert explain("self.containers.exists(c, c.image.endsWith('b'))").root.note == "true at step 2"
    assert explain("[1, 2, 3].exists_one(x, x > 1)").root.note == "a second match at step 3"


def test_errors_are_shown_where_they_happened() -> None:
    explanation = explain("self.containers.map(c, c.name).size() > 1 && true")
    assert str(explanation.error) == "no such key: name"
    record = explanation.root.as_json()
    assert record["error"] == "no such key: name"
    deepest = record
    while "children" in deepest:
        deepest = deepest["children"][-1]
    note = 'step 1 of 3: c = {"image": "r/a"}'
    assert deepest == {"expression": "c.name", "evaluated": True, "error": "no such key: name", "note": note}


def test_an_error_absorbed_by_or_is_still_visible() -> None:
    explanation = explain("self.nope == 1 || self.replicas == 3")
    assert explanation.value is True
    first, second = explanation.root.children
    assert str(first.value) == "no such key: nope" and second.note == "decided ||"


def test_conditional_and_bind() -> None:
    root = explain("cel.bind(n, self.containers.size(), n > 2 ? 'many' : 'few')").root
    assert root.value == "many"
    assert [c.text for c in root.children] == ["self.containers.size()", 'n > 2 ? "many" : "few"']
    assert root.children[1].children[0].note == "chose the branch"


def test_a_runaway_explanation_is_stopped() -> None:
    explanation = explain("self.all(x, x > 0)", list(range(1, MAX_EVENTS)))
    assert isinstance(explanation.error, kcel.CostLimitExceeded)
    assert str(explanation.error) == f"explanation stopped after {MAX_EVENTS:,} steps"


def test_explaining_does_not_change_the_result() -> None:
    for expression in ("self.containers.filter(c, c.image.startsWith('r/')).size()", "has(self.x) ? 1 : 2"):
        program = ENV.compile(expression)
        assert program.explain({"self": POD}).value == program.evaluate({"self": POD})
