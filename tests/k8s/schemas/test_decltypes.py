def test_assign_type_name_keeps_every_other_attribute() -> None:
    """assign_type_name builds its copies with the constructors: a field added to DeclType must be carried."""
    import dataclasses

    from kcel.k8s.schemas.decltypes import assign_type_name, schema_decl_type
    from kcel.k8s.schemas.schema import Schema

    schema = Schema.from_json({"type": "object", "properties": {"a": {"type": "array", "maxItems": 3, "items": {
        "type": "object", "properties": {"b": {"type": "string", "enum": ["x"], "default": "x"}}}}}})  # fmt: skip
    decl = schema_decl_type(schema)
    assert decl is not None
    named = assign_type_name(decl, "selfType1")
    assert named.name == "selfType1" and named.fields["a"].type.elem.name == "selfType1.a.@idx"  # type: ignore[union-attr]
    for before, after in ((decl, named), (decl.fields["a"].type, named.fields["a"].type)):
        for field in dataclasses.fields(before):
            if field.name not in ("name", "fields", "elem"):
                assert getattr(before, field.name) == getattr(after, field.name), field.name
    for field in dataclasses.fields(decl.fields["a"]):
        if field.name != "type":
            assert getattr(decl.fields["a"], field.name) == getattr(named.fields["a"], field.name), field.name


def test_schemas_of_the_same_content_share_a_structure() -> None:
    from kcel.k8s.schemas.schema import Schema, structure

    text = {"type": "object", "properties": {"a": {"type": "integer", "default": 1, "enum": [1, 2]}},
            "x-kubernetes-validations": [{"rule": "self.a > 0"}]}  # fmt: skip
    assert structure(Schema.from_json(text)) == structure(Schema.from_json(text))
    changed = {**text, "properties": {"a": {"type": "integer", "default": 2, "enum": [1, 2]}}}
    assert structure(Schema.from_json(changed)) != structure(Schema.from_json(text))
    hash(structure(Schema.from_json(text)))
