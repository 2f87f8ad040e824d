"""`kcel match-webhooks`, `kcel select-devices`, `kcel authenticate` and `kcel authorize`, driven through
`kcel.cli.main` on the shipped examples (examples/surfaces/) and on broken inputs written to a temporary folder."""

from __future__ import annotations

import base64
import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.cli import main
from kcel.k8s.surfaces.command import COMMANDS

ROOT = Path(__file__).resolve().parents[3]
S = "examples/surfaces"
WEBHOOKS = ["--config", f"{S}/webhook-configuration.yaml", "--config", f"{S}/mutating-webhook-configuration.yaml"]
DEPLOYMENT = f"{S}/team-deployment.yaml"
AUTHN = ["authenticate", "--config", f"{S}/authentication-configuration.yaml"]
AUTHZ = ["authorize", "--config", f"{S}/authorization-configuration.yaml"]
CLAIMS = f"{S}/token-claims.json"
DEVICES = ["select-devices", f"{S}/device-class.yaml", f"{S}/resource-slice.yaml"]


@pytest.fixture(autouse=True)
def at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples name their files relative to the repository, as the help's examples do."""
    monkeypatch.chdir(ROOT)


def write(path: Path, *documents: Any) -> str:
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return str(path)


def example(name: str) -> list[Any]:
    return list(yaml.safe_load_all((ROOT / S / name).read_text()))


def run_json(args: list[str], capsys: pytest.CaptureFixture[str], status: int = 0) -> dict[str, Any]:
    assert main([*args, "-o", "json"]) == status
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


# -- kcel match-webhooks ---------------------------------------------------------------------------------------------


def test_webhooks_called_mutating_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match-webhooks", *WEBHOOKS, DEPLOYMENT]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{DEPLOYMENT}: document 0: Deployment default/web CREATE: calls 2 of 3 webhooks",
        "  - mutating defaults.example.com / requests.defaults.example.com: called",
        "  - mutating defaults.example.com / pods.defaults.example.com: not called: no rule matches the request",
        "  - validating team-policies.example.com / team-policies.example.com: called",
    ]


def test_webhooks_not_called_say_why(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--namespace", "legacy", "--group", "system:nodes", DEPLOYMENT]
    assert main(["match-webhooks", *WEBHOOKS, "--namespaces", f"{S}/namespaces.yaml", *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("Deployment legacy/web CREATE: calls 0 of 3 webhooks")
    assert out[1].endswith("requests.defaults.example.com: not called: the namespaceSelector does not match the "
                           "namespace's labels")  # fmt: skip
    assert out[3].endswith("team-policies.example.com: not called: matchCondition not-a-node is false")
    assert main(["match-webhooks", *WEBHOOKS, *args]) == 0  # without the Namespace, only its name label
    assert "  - mutating defaults.example.com / requests.defaults.example.com: called" in capsys.readouterr().out


def test_namespaces_not_given_have_only_their_name_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (configuration,) = example("webhook-configuration.yaml")
    configuration["webhooks"][0]["namespaceSelector"] = {"matchLabels": {"example.com/env": "prod"}}
    config = write(tmp_path / "config.yaml", configuration)
    assert main(["match-webhooks", "--config", config, DEPLOYMENT]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "  - validating team-policies.example.com / team-policies.example.com: not called: the namespaceSelector does "
        "not match the namespace's labels (without --namespaces, a namespace has only its kubernetes.io/metadata.name "
        "label)"
    )
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "default", "labels": {"example.com/env": "prod"}},
    }
    namespaces = write(tmp_path / "namespaces.yaml", namespace)
    assert main(["match-webhooks", "--config", config, "--namespaces", namespaces, DEPLOYMENT]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("team-policies.example.com: called")


def test_a_condition_error_under_fail_rejects_the_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (configuration,) = example("webhook-configuration.yaml")
    configuration["webhooks"][0]["matchConditions"][1]["expression"] = (
        "object.metadata.labels['example.com/team'] != ''"
    )
    config = write(tmp_path / "config.yaml", configuration)
    obj = write(tmp_path / "obj.yaml", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}})
    assert main(["match-webhooks", "--config", config, obj]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("Deployment default/x CREATE: rejected (403 Forbidden)")
    assert out[1].startswith("  - validating team-policies.example.com / team-policies.example.com: not called: a "
                             "matchCondition failed and failurePolicy Fail rejects the request: ")  # fmt: skip
    assert out[2] == (
        '  Error from server (Forbidden): deployments.apps "x" is forbidden: expression '
        "'object.metadata.labels['example.com/team'] != ''' resulted in error: no such key: labels"
    )
    configuration["webhooks"][0]["failurePolicy"] = "Ignore"
    write(tmp_path / "config.yaml", configuration)
    assert main(["match-webhooks", "--config", config, obj]) == 0
    assert "a matchCondition failed and failurePolicy Ignore skips the webhook" in capsys.readouterr().out


def test_a_mutating_rejection_stops_before_validation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (configuration,) = example("mutating-webhook-configuration.yaml")
    configuration["webhooks"][0]["failurePolicy"] = "Fail"
    config = write(tmp_path / "mutating.yaml", configuration)
    obj = write(tmp_path / "obj.yaml", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}})
    report = run_json(["match-webhooks", "--config", config, *WEBHOOKS[:2], obj], capsys, 1)
    (result,) = report["results"]
    assert (result["allowed"], result["code"], result["called"]) == (False, 403, [])
    assert [hook["reason"] for hook in result["webhooks"]] == ["rejected"]  # the pods webhook is not reached either
    assert result["notes"] == ["validating webhooks are not reached: the request was rejected"]


def test_match_webhooks_json(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(["match-webhooks", *WEBHOOKS, "--operation", "update", "--old", DEPLOYMENT, DEPLOYMENT], capsys)
    assert (report["problems"], report["skipped"]) == ([], [])
    (result,) = report["results"]
    assert result["operation"] == "UPDATE" and result["allowed"] is True and result["code"] == 200
    assert result["called"] == ["team-policies.example.com"]  # the mutating webhook is for CREATE only
    assert result["webhooks"][0] == {
        "kind": "MutatingWebhookConfiguration", "configuration": "defaults.example.com",
        "webhook": "requests.defaults.example.com", "matched": False, "reason": "rules", "detail": "",
    }  # fmt: skip


def test_a_configuration_that_would_not_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (configuration,) = example("webhook-configuration.yaml")
    configuration["webhooks"][0]["matchConditions"][0]["name"] = "Not A Node"
    configuration["webhooks"][0]["timeoutSeconds"] = 60
    config = write(tmp_path / "config.yaml", configuration)
    assert main(["match-webhooks", "--config", config, DEPLOYMENT]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    where = f"error: {config}: document 0: ValidatingWebhookConfiguration team-policies.example.com: webhooks[0]"
    assert f"{where}.timeoutSeconds: Invalid value: 60: the timeout value must be between 1 and 30 seconds" in (
        captured.err
    )
    assert f'{where}.matchConditions[0].name: Invalid value: "Not A Node": name part must consist of' in captured.err
    assert "Traceback" not in captured.err


def test_match_webhooks_unusable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.yaml")
    assert main(["match-webhooks", *WEBHOOKS, missing]) == 2
    assert capsys.readouterr().err == f"kcel match-webhooks: {missing}: no such file or directory\n"
    assert main(["match-webhooks", "--config", f"{S}/device-class.yaml", DEPLOYMENT]) == 1
    err = capsys.readouterr().err
    assert f"error: no webhook configuration in {S}/device-class.yaml" in err
    assert f"skipped: {S}/device-class.yaml: document 0: DeviceClass (resource.k8s.io/v1) is not a webhook" in err
    assert main(["match-webhooks", *WEBHOOKS, "--old", f"{S}/namespaces.yaml", DEPLOYMENT]) == 1
    assert "no object with the same kind, namespace and name in" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["match-webhooks", DEPLOYMENT])  # --config is required
    assert exited.value.code == 2


# -- kcel select-devices ---------------------------------------------------------------------------------------------


def test_devices_selected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(DEVICES) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{S}/device-class.yaml: document 1: ResourceClaim default/training-gpu: a device for every request",
        "  request gpu (class large-gpu.example.com): 1 of 3 devices selected",
        "    - gpu.example.com/node-1/gpu-0: selected",
        "    - gpu.example.com/node-1/gpu-1: not selected",
        "    - gpu.example.com/node-1/gpu-2: not selected",
    ]


def claim(*requests: Any, kind: str = "ResourceClaim") -> dict[str, Any]:
    spec = {"devices": {"requests": list(requests)}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"spec": spec} if kind == "ResourceClaimTemplate" else spec}  # fmt: skip


def request(name: str, expression: str, device_class: str = "large-gpu.example.com") -> dict[str, Any]:
    return {"name": name, "deviceClassName": device_class, "selectors": [{"cel": {"expression": expression}}]}


def test_no_device_for_a_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wanted = claim({"name": "gpu", "exactly": request("gpu", "device.attributes['gpu.example.com'].model == 'h100'")})
    claims = write(tmp_path / "claims.yaml", wanted)
    assert main([*DEVICES, claims]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[5] == f"{claims}: document 0: ResourceClaim ns/c: no device for request gpu"


def test_first_available_needs_one_option_with_a_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    options = [request("huge", "device.capacity['gpu.example.com'].memory.compareTo(quantity('100Gi')) >= 0"),
               request("any", "true")]  # fmt: skip
    claims = write(tmp_path / "c.yaml", claim({"name": "gpu", "firstAvailable": options}, kind="ResourceClaimTemplate"))
    result = run_json([*DEVICES, claims], capsys)["results"][1]
    assert (result["kind"], result["allocatable"], result["unsatisfied"]) == ("ResourceClaimTemplate", True, [])
    assert [(r["request"], r["selected"]) for r in result["requests"]] == [
        ("gpu/huge", []), ("gpu/any", ["gpu.example.com/node-1/gpu-0", "gpu.example.com/node-1/gpu-2"]),
    ]  # fmt: skip
    assert main([*DEVICES, claims]) == 0
    assert "  request gpu, option huge (class large-gpu.example.com): 0 of 3 devices selected" in (
        capsys.readouterr().out.splitlines()
    )


def test_a_selector_error_fails_the_allocation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failing = claim({"name": "gpu", "exactly": request("gpu", "device.attributes['gpu.example.com'].missing")})
    claims = write(tmp_path / "claims.yaml", failing)
    assert main([*DEVICES, claims]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[5] == f"{claims}: document 0: ResourceClaim ns/c: allocation fails"
    assert out[7].startswith("    - gpu.example.com/node-1/gpu-0: error: claim ns/c: selector #0 on device "
                             "gpu.example.com/node-1/gpu-0: CEL runtime error: no such key: missing")  # fmt: skip
    assert out[-1].startswith("  the scheduler stops allocating the claim: claim ns/c: selector #0 on device")
    report = run_json([*DEVICES, claims], capsys, 1)
    assert report["results"][1]["failure"].startswith("claim ns/c: selector #0")
    missing_class = write(tmp_path / "missing.yaml", claim({"name": "gpu", "exactly": request("gpu", "true", "x")}))
    assert main([*DEVICES, missing_class]) == 1
    assert "  request gpu: error: claim ns/c, request gpu: could not retrieve device class x: deviceclass.resource" in (
        capsys.readouterr().out
    )


def test_select_devices_json_and_malformed_slices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    devices = [{"name": "a", "attributes": {"m": {"int": "1"}}}]
    bad = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "bad"},
           "spec": {"driver": "x", "pool": {"name": "p"}, "devices": devices}}  # fmt: skip
    slices = write(tmp_path / "slices.yaml", bad)
    report = run_json([*DEVICES, slices], capsys, 1)
    problem = f"{slices}: document 0: spec.devices[0].attributes[m].int: Invalid value: expected int values"
    assert report["problems"] == [problem]
    (result,) = report["results"]
    assert result["errors"] == [problem] and result["allocatable"] is True
    assert result["requests"][0]["devices"][0] == {
        "device": "gpu.example.com/node-1/gpu-0", "matches": True, "error": "", "cost": 17,
    }  # fmt: skip


def test_select_devices_usage_and_unusable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*DEVICES, "--feature-gate", "DRANope=true"]) == 2
    assert "kcel select-devices: unknown feature gate 'DRANope'" in capsys.readouterr().err
    assert main([*DEVICES, "--feature-gate", "DRAListTypeAttributes"]) == 2
    assert "--feature-gate takes NAME=true|false, got 'DRAListTypeAttributes'" in capsys.readouterr().err
    assert main([*DEVICES, "--k8s-version", "1.30"]) == 2
    assert "Kubernetes 1.30 has no device selectors" in capsys.readouterr().err
    assert main([*DEVICES, str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err == f"kcel select-devices: {tmp_path / 'missing'}: no such file or directory\n"
    assert main(["select-devices", f"{S}/resource-slice.yaml"]) == 1
    assert f"error: no ResourceClaim or ResourceClaimTemplate in {S}/resource-slice.yaml" in capsys.readouterr().err
    (tmp_path / "broken.yaml").write_text("a: [\n")
    assert main([*DEVICES, str(tmp_path / "broken.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'broken.yaml'}:") and "Traceback" not in err


# -- kcel authenticate -----------------------------------------------------------------------------------------------


def jwt(claims: dict[str, Any]) -> str:
    """An unsigned compact JWT: kcel reads the payload only."""
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"eyJhbGciOiJub25lIn0.{payload}.c2ln"


def test_authenticated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*AUTHN, CLAIMS]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{CLAIMS}: authenticated by https://issuer.example.com",
        "  username: jane@example.com",
        "  uid: (none)",
        "  groups: oidc:admin, oidc:dev (the API server adds system:authenticated)",
        "  extra example.com/tenant: acme",
    ]


def test_rejected_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*AUTHN, "--now", "2026-01-01T02:00:00Z", CLAIMS]) == 1
    assert capsys.readouterr().out == (
        f"{CLAIMS}: rejected: oidc: verify token: oidc: token is expired "
        "(Token Expiry: 2026-01-01 01:00:00 +0000 UTC)\n"
    )
    assert main([*AUTHN, "--now", "1767225700", CLAIMS]) == 0  # within iat..exp
    capsys.readouterr()
    claims = json.loads((ROOT / CLAIMS).read_text()) | {"email_verified": False}
    assert main([*AUTHN, jwt(claims)]) == 1
    assert capsys.readouterr().out == (
        "the token: rejected: oidc: error evaluating claim validation expression: validation expression "
        "'claims.email_verified == true' failed: the e-mail address must be verified\n"
    )
    assert main([*AUTHN, '{"iss": "https://other.example.com"}']) == 1
    assert 'rejected: no JWT authenticator has issuer "https://other.example.com"' in capsys.readouterr().out


def test_tokens_from_stdin_and_yaml_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = json.loads((ROOT / CLAIMS).read_text())
    monkeypatch.setattr(sys, "stdin", io.StringIO(jwt(claims) + "\n"))
    report = run_json([*AUTHN, "-"], capsys)
    (result,) = report["results"]
    assert result == {
        "source": "<stdin>", "user": {"username": "jane@example.com", "uid": "", "groups": ["oidc:admin", "oidc:dev"],
                                      "extra": {"example.com/tenant": ["acme"]}},
        "error": "", "issuer": "https://issuer.example.com", "authenticated": True,
    }  # fmt: skip
    claims_yaml = write(tmp_path / "claims.yaml", claims | {"email": "joe@example.com"})
    assert main([*AUTHN, claims_yaml]) == 0
    assert "  username: joe@example.com" in capsys.readouterr().out
    (tmp_path / "token.jwt").write_text(jwt(claims))
    assert main([*AUTHN, str(tmp_path / "token.jwt")]) == 0
    capsys.readouterr()
    (tmp_path / "list.yaml").write_text("- a\n")
    assert main([*AUTHN, str(tmp_path / "list.yaml")]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path / 'list.yaml'}: holds neither a JWT nor an object of claims\n"


def test_an_authentication_configuration_that_would_not_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (configuration,) = example("authentication-configuration.yaml")
    configuration["jwt"][0]["claimMappings"]["username"]["expression"] = "1 + 'x'"
    config = write(tmp_path / "authn.yaml", configuration)
    report = run_json(["authenticate", "--config", config, CLAIMS], capsys, 1)
    assert report["results"] == []
    (problem,) = report["problems"]
    assert problem.startswith(
        f"{config}: document 0: jwt[0].claimMappings.username.expression: Invalid value: \"1 + 'x'\": "
        "compilation failed: ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'"
    )
    two = write(tmp_path / "two.yaml", configuration, configuration)
    assert main(["authenticate", "--config", two, CLAIMS]) == 1
    assert capsys.readouterr().err == f"error: {two}: holds 2 documents; a configuration file holds one\n"


def test_authenticate_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*AUTHN, str(tmp_path / "token.json")]) == 2
    assert capsys.readouterr().err.startswith(f"kcel authenticate: {tmp_path / 'token.json'}: no such file")
    assert main(["authenticate", "--config", str(tmp_path / "authn.yaml"), CLAIMS]) == 2
    assert capsys.readouterr().err == f"kcel authenticate: {tmp_path / 'authn.yaml'}: no such file or directory\n"
    for now in ("yesterday", "nan"):
        with pytest.raises(SystemExit) as exited:
            main([*AUTHN, "--now", now, CLAIMS])
        assert exited.value.code == 2
        assert f"not an RFC 3339 time or Unix seconds: '{now}'" in capsys.readouterr().err


# -- kcel authorize --------------------------------------------------------------------------------------------------


def test_authorization_chains(capsys: pytest.CaptureFixture[str]) -> None:
    review = f"{S}/subject-access-review.yaml"
    assert main([*AUTHZ, review]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{review}: document 0: jane@example.com get pods in default: undecided: an authorizer kcel cannot answer "
        "for decides",
        "  - node (Node): asked: kcel cannot know its answer",
        "  - rbac (RBAC): asked if those above have no opinion",
        "  - policy.example.com (Webhook): asked (its matchConditions hold) if those above have no opinion",
        f"{review}: document 1: jane@example.com list secrets in kube-system: undecided: an authorizer kcel cannot "
        "answer for decides",
        "  - node (Node): asked: kcel cannot know its answer",
        "  - rbac (RBAC): asked if those above have no opinion",
        '  - policy.example.com (Webhook): skipped: matchCondition "request.resourceAttributes.namespace != '
        "'kube-system'\" is false",
    ]


def configuration(*authorizers: Any) -> dict[str, Any]:
    return {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthorizationConfiguration",
            "authorizers": list(authorizers)}  # fmt: skip


def webhook(policy: str, *conditions: str) -> dict[str, Any]:
    return {"type": "Webhook", "name": "hook", "webhook": {
        "timeout": "3s", "subjectAccessReviewVersion": "v1", "matchConditionSubjectAccessReviewVersion": "v1",
        "failurePolicy": policy, "connectionInfo": {"type": "InClusterConfig"},
        "matchConditions": [{"expression": c} for c in conditions]}}  # fmt: skip


def review(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


def test_denied_and_forbidden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deny = write(tmp_path / "deny.yaml", configuration(webhook("Deny", "request.resourceAttributes.name == 'x'")))
    reviews = write(tmp_path / "reviews.yaml", review(user="jane", nonResourceAttributes={"verb": "get", "path": "/x"}))
    assert main(["authorize", "--config", deny, reviews]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{reviews}: document 0: jane get /x: denied",
        "  - hook (Webhook): denies: cel evaluation error: expression 'request.resourceAttributes.name == 'x'' "
        "resulted in error: no such key: resourceAttributes",
    ]
    forbid = write(tmp_path / "forbid.yaml", configuration({"type": "AlwaysDeny", "name": "alwaysdeny"}))
    assert main(["authorize", "--config", forbid, reviews]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{reviews}: document 0: jane get /x: forbidden: no authorizer has an opinion",
        "  - alwaysdeny (AlwaysDeny): no opinion: Everything is forbidden.",
    ]
    masters = write(tmp_path / "masters.yaml", {"user": "root", "groups": ["system:masters"]})  # a bare spec
    assert main(["authorize", "--config", forbid, masters]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "  - system:masters (PrivilegedGroups): allows"


def test_authorize_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ignore = configuration(webhook("NoOpinion", "request.resourceAttributes.name == 'x'"),
                           {"type": "AlwaysAllow", "name": "alwaysallow"})  # fmt: skip
    config = write(tmp_path / "config.yaml", ignore)
    reviews = write(tmp_path / "reviews.yaml", review(user="jane", nonResourceAttributes={"verb": "get", "path": "/x"}))
    report = run_json(["authorize", "--config", config, reviews], capsys)
    (result,) = report["results"]
    assert result["decision"] == "allow" and result["request"] == "jane get /x"
    assert result["steps"][0]["outcome"] == "skip" and result["steps"][0]["condition"] is False
    assert result["steps"][0]["detail"].startswith("cel evaluation error: expression 'request.resourceAttributes.name")
    assert result["steps"][1] == {"authorizer": "alwaysallow", "type": "AlwaysAllow", "outcome": "allow", "detail": "",
                                  "condition": False}  # fmt: skip


def test_an_authorization_configuration_that_would_not_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "config.yaml", configuration(webhook("Maybe", "request.foo")))
    assert main(["authorize", "--config", config, f"{S}/subject-access-review.yaml"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f'error: {config}: document 0: authorizers[0].failurePolicy: Unsupported value: "Maybe": supported ' in (
        captured.err
    )
    assert f"error: {config}: document 0: authorizers[0].matchConditions[0].expression: Invalid value: " in (
        captured.err
    )


def test_authorize_unusable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*AUTHZ, str(tmp_path / "missing.yaml")]) == 2
    assert capsys.readouterr().err == f"kcel authorize: {tmp_path / 'missing.yaml'}: no such file or directory\n"
    assert main([*AUTHZ, DEPLOYMENT]) == 1
    assert capsys.readouterr().err == (
        f"error: {DEPLOYMENT}: document 0: Deployment (apps/v1) is not a SubjectAccessReview or its spec\n"
    )
    wrong = write(tmp_path / "wrong.yaml", review(user=["jane"]))
    assert main([*AUTHZ, wrong]) == 1
    assert capsys.readouterr().err == f"error: {wrong}: document 0: spec.user: must be a string\n"


# -- every command -------------------------------------------------------------------------------------------------


def examples(command: str, capsys: pytest.CaptureFixture[str]) -> list[tuple[list[str], int]]:
    """The help's example command lines (continuations joined) and the exit status each states (0 unless said)."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out.replace("\\\n", " ")
    assert f"examples:\n  kcel {command} " in text
    found = []
    for line in text.splitlines():
        if line.strip().startswith("kcel "):
            command_line, _, comment = line.partition("   #")
            status = re.search(r"exit status (\d)", comment)
            found.append((shlex.split(command_line)[1:], int(status.group(1)) if status else 0))
    return found


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_example_in_the_help_runs(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    found = examples(command, capsys)
    assert len(found) >= 2
    for argv, status in found:
        assert (argv, main(argv)) == (argv, status)
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err and "error:" not in captured.err


def test_import_is_cheap() -> None:
    code = "import sys, kcel.k8s.surfaces.command; print(sorted(m for m in sys.modules if m in MODULES))"
    modules = ["yaml", "kcel.k8s.surfaces.webhooks", "kcel.k8s.surfaces.dra", "kcel.k8s.admission.policyset"]
    result = subprocess.run([sys.executable, "-c", f"MODULES = {modules!r}; {code}"], capture_output=True, text=True,
                            check=True, cwd=ROOT)  # fmt: skip
    assert result.stdout.strip() == "[]"
