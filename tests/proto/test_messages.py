"""Protobuf messages as CEL values (`kcel.Env(messages=...)`): the checker's types, fields read in place, literals,
presence, equality, well-known types and errors, on a small schema built here (no generated code)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.protobuf", reason="protobuf messages need the kcel[protobuf] extra")

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2, wrappers_pb2  # noqa: E402

import kcel  # noqa: E402
from kcel.values import Uint  # noqa: E402

F = descriptor_pb2.FieldDescriptorProto


def _schema() -> descriptor_pb2.FileDescriptorSet:
    """package acme.v1 (proto3): Pod with scalar, repeated, map, message, wrapper, timestamp, enum, Any fields."""
    file = descriptor_pb2.FileDescriptorProto(name="acme/v1/pod.proto", package="acme.v1", syntax="proto3")
    file.dependency.extend(
        ["google/protobuf/wrappers.proto", "google/protobuf/timestamp.proto", "google/protobuf/any.proto"]
    )
    phase = file.enum_type.add(name="Phase")
    for number, name in enumerate(["PENDING", "RUNNING", "FAILED"]):
        phase.value.add(name=name, number=number)
    container = file.message_type.add(name="Container")
    container.field.add(name="image", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    container.field.add(name="cpu", number=2, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    pod = file.message_type.add(name="Pod")
    entry = pod.nested_type.add(name="LimitsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    fields: list[tuple[str, int, str]] = [
        ("name", F.TYPE_STRING, ""), ("replicas", F.TYPE_INT32, ""), ("uid", F.TYPE_UINT64, ""),
        ("tags", F.TYPE_STRING, "repeated"), ("limits", F.TYPE_MESSAGE, ".acme.v1.Pod.LimitsEntry"),
        ("main", F.TYPE_MESSAGE, ".acme.v1.Container"), ("budget", F.TYPE_MESSAGE, ".google.protobuf.Int64Value"),
        ("created", F.TYPE_MESSAGE, ".google.protobuf.Timestamp"), ("phase", F.TYPE_ENUM, ".acme.v1.Phase"),
        ("extra", F.TYPE_MESSAGE, ".google.protobuf.Any"), ("ratio", F.TYPE_DOUBLE, ""),
        ("ports", F.TYPE_UINT32, "repeated"),
    ]  # fmt: skip
    for number, (name, kind, extra) in enumerate(fields, 1):
        field = pod.field.add(name=name, number=number, type=kind, label=F.LABEL_OPTIONAL)
        if extra == "repeated" or name == "limits":
            field.label = F.LABEL_REPEATED
        if extra and extra != "repeated":
            field.type_name = extra
    return descriptor_pb2.FileDescriptorSet(file=[file])


SCHEMA = _schema()


def _pod_class() -> Any:
    pool = descriptor_pool.DescriptorPool()
    for module in (wrappers_pb2, timestamp_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    from google.protobuf import any_pb2

    proto = descriptor_pb2.FileDescriptorProto()
    any_pb2.DESCRIPTOR.CopyToProto(proto)
    pool.Add(proto)
    pool.Add(SCHEMA.file[0])
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.v1.Pod"))


Pod = _pod_class()  # what generated code (`pod_pb2.Pod`) gives a user
ENV = kcel.Env(variables={"pod": "acme.v1.Pod", "x": "dyn", "y": "dyn"}, container="acme.v1", messages=[Pod])


def _pod() -> Any:
    pod = Pod(name="web", replicas=3, uid=7, tags=["a", "b"], ratio=0.5, ports=[80, 443])
    pod.limits["cpu"] = 2
    pod.main.image = "nginx"
    pod.budget.value = 10
    pod.created.seconds = 100
    pod.phase = 1
    return pod


def ev(expr: str, **bindings: Any) -> Any:
    return ENV.compile(expr).evaluate({"pod": _pod(), **bindings})


def test_import_kcel_loads_no_protobuf() -> None:
    code = "import sys, kcel; kcel.Env(); print('google.protobuf' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("expr", "value", "type_"),
    [
        ("pod.name", "web", "string"),
        ("pod.replicas", 3, "int"),
        ("pod.uid", Uint(7), "uint"),
        ("pod.tags", ["a", "b"], "list(string)"),
        ("pod.ports", [Uint(80), Uint(443)], "list(uint)"),
        ("pod.limits", {"cpu": 2}, "map(string, int)"),
        ("pod.main.image", "nginx", "string"),
        ("pod.budget", 10, "wrapper(int)"),
        ("pod.budget + 1", 11, "int"),
        ("pod.phase", 1, "int"),
        ("pod.phase == Phase.RUNNING", True, "bool"),
        ("pod.created == timestamp(100)", True, "bool"),
        ("pod.main", None, "acme.v1.Container"),  # compared below: the message itself
        ("type(pod) == acme.v1.Pod", True, "bool"),
        ("pod.tags[1] + pod.tags[0]", "ba", "string"),
        ("size(pod.limits) + size(pod.tags)", 3, "int"),
        ("pod.limits['cpu']", 2, "int"),
        ("'b' in pod.tags && 'cpu' in pod.limits && !('z' in pod.tags)", True, "bool"),
        ("pod.tags + ['c']", ["a", "b", "c"], "list(string)"),
        ("pod.tags.map(t, t + '!')", ["a!", "b!"], "list(string)"),
        ("pod.ports.all(p, p > 10u)", True, "bool"),
        ("pod.limits.exists(k, v, v == 2)", True, "bool"),
        ("dyn(pod).replicas + int(dyn(pod).main.cpu)", 3, "int"),
    ],
)
def test_fields_read_in_place_with_their_cel_types(expr: str, value: Any, type_: str) -> None:
    program = ENV.compile(expr)
    assert str(program.output_type) == type_
    result = program.evaluate({"pod": _pod()})
    if value is None:
        assert result.image == "nginx"
    elif isinstance(value, list):  # a repeated field is a view of the field, a list to CEL
        assert list(result) == value and all(type(r) is type(v) for r, v in zip(result, value, strict=True))
    elif isinstance(value, dict):  # so is a map field
        assert dict(result.items()) == value
    else:
        assert result == value and type(result) is type(value)


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        # proto3: a scalar is present when not zero, a message or wrapper when set, a list or map when not empty
        ("has(Pod{}.name) || has(Pod{}.replicas) || has(Pod{}.tags) || has(Pod{}.limits)", False),
        ("has(Pod{}.main) || has(Pod{}.budget) || has(Pod{}.created)", False),
        ("has(pod.name) && has(pod.main) && has(pod.budget) && has(pod.tags) && has(pod.limits)", True),
        ("has(Pod{ratio: -0.0}.ratio)", True),  # protobuf tests the bits
        ("Pod{}.budget == null && Pod{}.main.image == '' && Pod{}.created == timestamp(0)", True),
        ("Pod{main: Container{}}.main == Container{} && has(Pod{main: Container{}}.main)", True),
        ("pod.?budget.orValue(0) + Pod{}.?budget.orValue(5)", 15),
        ("Pod{budget: null}.budget == null && Pod{budget: 4}.budget == 4", True),
    ],
)
def test_presence_and_defaults(expr: str, value: Any) -> None:
    assert ev(expr) == value


def test_literals_equality_and_types() -> None:
    assert ev("Pod{name: 'web', tags: ['a']} == Pod{tags: ['a'], name: 'web'}") is True
    assert ev("Pod{name: 'web'} != Pod{name: 'db'}") is True
    assert ev("Pod{ratio: 0.0/0.0} == Pod{ratio: 0.0/0.0}") is False  # NaN: cel-go's pb.Equal, not protobuf's ==
    assert ev("dyn(Pod{name: 'a'}) == dyn(Container{image: 'a'})") is False
    assert ev("x == pod", x=_pod()) is True  # a message built elsewhere (here: by the caller) compares by value
    built = ev("Pod{name: 'n', limits: {'m': 1}, ports: [1u], extra: Container{image: 'i'}, created: timestamp(5)}")
    assert built.name == "n" and dict(built.limits) == {"m": 1} and list(built.ports) == [1]
    assert built.created.seconds == 5 and built.extra.type_url == "type.googleapis.com/acme.v1.Container"
    assert ev("Pod{extra: Container{image: 'i'}}.extra.image") == "i"  # an Any reads as what it holds
    assert ev("Pod{extra: 42}.extra") == 42  # packed as an Int64Value
    assert ev("Pod{extra: {'a': [1, 'x']}}.extra") == {"a": [1.0, "x"]}  # a Struct
    assert ev("type(Pod{}.main)") == kcel.TypeValue("acme.v1.Container")


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (
            "Pod{replicas: 3000000000}",
            "field type conversion error for acme.v1.Pod.replicas value type: integer overflow",
        ),
        ("Pod{ports: [5000000000u]}", "unsigned integer overflow"),
        (
            "Pod{name: x}",
            "conversion error for acme.v1.Pod.name value type: unsupported type conversion from 'int' to string",
        ),
        ("Pod{tags: x}", "unsupported field type for acme.v1.Pod.tags: int"),
        ("dyn(pod).nope", "no such field 'nope'"),
        ("has(dyn(pod).nope)", "no such field 'nope'"),
        (
            "Pod{replicas: y}",
            "field type conversion error for acme.v1.Pod.replicas value type: unsupported native "
            "conversion from string to 'int32'",
        ),
        (
            "Pod{budget: y}",
            "type conversion error for acme.v1.Pod.budget value type: unsupported native conversion "
            "from string to '*wrapperspb.Int64Value'",
        ),
        ("Pod{main: dyn(Pod{})}", "type conversion error from '*acme.v1.Pod' to '*acme.v1.Container'"),
        (
            "Pod{extra: Container{}}.extra.image == '' && Pod{}.extra == null",
            "conversion error: invalid empty type URL",
        ),
    ],
)
def test_errors_are_cel_errors_with_cel_gos_texts(expr: str, message: str) -> None:
    with pytest.raises(kcel.EvalError) as caught:
        ENV.compile(expr).evaluate({"pod": _pod(), "x": 1, "y": "s"})
    assert message in str(caught.value)


def test_checker_knows_the_fields() -> None:
    with pytest.raises(kcel.CompileError, match="undefined field 'nope'"):
        ENV.compile("pod.nope")
    with pytest.raises(kcel.CompileError, match="expected type of field 'replicas' is 'int' but provided type is"):
        ENV.compile("Pod{replicas: 'x'}")
    with pytest.raises(kcel.CompileError, match="undeclared reference to 'Nope'"):
        ENV.compile("Nope{}")


def test_well_known_messages_bound_to_variables_are_cel_values() -> None:
    env = kcel.Env(variables={"t": "google.protobuf.Timestamp", "w": "google.protobuf.Int64Value"}, messages=[])
    program = env.compile("t + duration('1s') == timestamp(11) && w + 1 == 5")
    assert program.evaluate({"t": timestamp_pb2.Timestamp(seconds=10), "w": wrappers_pb2.Int64Value(value=4)})
    assert str(env.compile("w").output_type) == "wrapper(int)"


def test_sources_classes_descriptor_sets_and_files(tmp_path: Path) -> None:
    from google.protobuf import json_format

    serialized = tmp_path / "set.pb"
    serialized.write_bytes(SCHEMA.SerializeToString())
    as_json = json_format.MessageToDict(SCHEMA, preserving_proto_field_name=True)
    for source in (SCHEMA, SCHEMA.SerializeToString(), serialized, as_json, Pod, Pod.DESCRIPTOR.file):
        env = kcel.Env(variables={"pod": "acme.v1.Pod"}, messages=[source])
        assert env.compile("acme.v1.Pod{name: 'a'}.name + pod.name").evaluate({"pod": _pod()}) == "aweb"
    with pytest.raises(TypeError, match="not a protobuf message source"):
        kcel.Env(messages=[42])


def test_costs_are_counted_on_messages() -> None:
    value, cost = ENV.compile("pod.tags.all(t, t != '')").evaluate_with_cost({"pod": _pod()})
    assert value is True and cost > 0
    assert ENV.compile("Pod{name: 'a'}").evaluate_with_cost({})[1] == 40  # cel-go's struct-creation cost


def test_results_of_views_are_lists_and_maps() -> None:
    tags, limits = ev("pod.tags"), ev("pod.limits")
    assert list(tags) == ["a", "b"] and len(tags) == 2 and tags[-1] == "b"
    assert dict(limits.items()) == {"cpu": 2} and "cpu" in limits and limits.get("gpu") is None
    assert math.isclose(ev("pod.ratio"), 0.5)


def test_messages_of_another_class_are_read_the_general_way() -> None:
    other = _pod_class()  # a second pool: the same full name, another class (not the one fields are inlined for)
    assert other is not Pod
    pod = other(name="x", replicas=2, tags=["t"])
    pod.budget.value = 3
    program = ENV.compile("pod.name + string(pod.replicas) + string(pod.budget) + pod.tags[0] + string(has(pod.main))")
    assert program.evaluate({"pod": pod}) == "x23tfalse"
    assert "pod.name" not in program.python_source  # the typed read is inline, behind a class test
    assert ".name if " in program.python_source


def test_one_descriptor_set_one_pool() -> None:
    from kcel.proto.registry import Messages

    first, second = Messages([SCHEMA]), Messages([SCHEMA.SerializeToString()])
    assert first.descriptors["acme.v1.Pod"] is second.descriptors["acme.v1.Pod"]
    pod = first.from_json("acme.v1.Pod", {"name": "j", "replicas": 4})
    env = kcel.Env(variables={"pod": "acme.v1.Pod"}, messages=[SCHEMA])
    assert env.compile("pod.name + string(pod.replicas)").evaluate({"pod": pod}) == "j4"


def test_a_set_the_default_pool_holds_is_read_with_its_classes() -> None:
    """A program that added the files to protobuf's default pool (as generated code does) builds its messages
    from that pool's classes: kcel uses the same descriptors, so reads are inline, not the general way."""
    file = descriptor_pb2.FileDescriptorProto(name="acme/v2/node.proto", package="acme.v2", syntax="proto2")
    node = file.message_type.add(name="Node")
    node.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    node.field.add(name="weight", number=2, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL, default_value="6.4")
    default = descriptor_pool.Default()
    try:
        default.FindFileByName(file.name)
    except KeyError:
        default.Add(file)
    Node = message_factory.GetMessageClass(default.FindMessageTypeByName("acme.v2.Node"))  # noqa: N806
    env = kcel.Env(variables={"n": "acme.v2.Node"}, messages=[descriptor_pb2.FileDescriptorSet(file=[file])])
    program = env.compile("n.name")
    assert program.evaluate({"n": Node(name="a")}) == "a"
    from kcel.proto.types import message_type

    assert message_type(Node.DESCRIPTOR).message_class is Node
    assert env.struct_type("acme.v2.Node").message_class is Node  # type: ignore[union-attr]


README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_shows_what_kcel_eval_prints_for_messages(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import re
    import shlex

    from kcel.cli import main

    runs = re.findall(r"```\n(\$ kcel eval --messages [^\n]*)\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert runs
    monkeypatch.chdir(README.parent)
    for line, output in runs:
        assert main(shlex.split(line.removeprefix("$ kcel "))) == 0
        assert capsys.readouterr().out == output


def test_kcel_eval_messages_errors_name_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kcel.cli import main

    descriptors = tmp_path / "pod.pb"
    descriptors.write_bytes(SCHEMA.SerializeToString())
    base = ["eval", "--messages", str(descriptors), "--decl", "pod:acme.v1.Pod"]
    assert main([*base, "--var", 'pod={"name": "a", "uid": "9"}', "-o", "json", "pod"]) == 0
    assert '"value": {"name": "a", "uid": "9"}, "type": "acme.v1.Pod"' in capsys.readouterr().out
    assert main([*base, "--var", 'pod={"nam": "a"}', "pod"]) == 2
    assert 'pod: not a acme.v1.Pod in protobuf\'s JSON: Message type "acme.v1.Pod" has no field named "nam"' in (
        capsys.readouterr().err
    )
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff")
    assert main(["eval", "--messages", str(bad), "1"]) == 2
    assert "--messages: not a FileDescriptorSet" in capsys.readouterr().err
    assert main(["eval", "--messages", str(tmp_path / "missing.pb"), "1"]) == 2
    assert "--messages: No such file or directory" in capsys.readouterr().err


def test_the_repl_knows_message_types() -> None:
    from kcel.proto.library import protobuf_library
    from kcel.repl import Session

    session = Session(messages=protobuf_library([SCHEMA]))
    assert session.handle("%let p = acme.v1.Pod{name: 'web', tags: ['x']}") == (
        'p = acme.v1.Pod{name: "web", tags: ["x"]} : acme.v1.Pod'
    )
    assert session.handle("p.tags[0] + p.name") == '"xweb" : string'
    assert session.handle("%declare q: acme.v1.Pod")  # declared with the message type: checked, no value yet
    assert session.handle("has(q.main)").startswith("error: no value for q")
    session.handle("%option --env webhook-match")  # every environment has them
    assert session.handle("acme.v1.Phase.FAILED") == "2 : int"
    assert "undefined field 'nope'" in session.handle("acme.v1.Pod{}.nope")


def test_fields_read_in_place_set_other_messages() -> None:
    """A repeated or map field read from one message (a view, not a list or dict) sets another's (found by
    comparing kcel with cel-expr-python field by field)."""
    built = ev("Pod{tags: pod.tags, limits: pod.limits, ports: pod.ports, extra: pod.tags}")
    assert list(built.tags) == ["a", "b"] and dict(built.limits) == {"cpu": 2} and list(built.ports) == [80, 443]
    assert ev("Pod{tags: pod.tags, limits: pod.limits}.limits == pod.limits") is True
    assert ev("Pod{extra: pod.tags}.extra") == ["a", "b"]  # a list packs as a ListValue


def test_proto2_groups_are_message_fields() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="acme/v5/g.proto", package="acme.v5", syntax="proto2")
    outer = file.message_type.add(name="Outer")
    outer.nested_type.add(name="Inner").field.add(name="x", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    outer.field.add(name="inner", number=1, type=F.TYPE_GROUP, label=F.LABEL_OPTIONAL, type_name=".acme.v5.Outer.Inner")
    env = kcel.Env(container="acme.v5", messages=[descriptor_pb2.FileDescriptorSet(file=[file])])
    assert env.compile("Outer{inner: Outer.Inner{x: 3}}.inner.x").evaluate({}) == 3
    assert env.compile("has(Outer{}.inner) || Outer{inner: Outer{}.inner} != Outer{}").evaluate({}) is True
