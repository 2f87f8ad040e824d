"""`kcel serve` on a core install: without the `serve` extra it says what to install instead of failing on import."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kcel.cli import main
from kcel.webhook.command import SERVER_PACKAGES, missing_server_packages

POLICIES = Path(__file__).parent / "policies"


def test_all_server_packages_are_found_in_the_test_install() -> None:
    assert missing_server_packages() == []


@pytest.mark.parametrize("package", SERVER_PACKAGES)
def test_serve_without_a_server_package_exits_2_saying_what_to_install(
    package: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # what an absent package looks like to the import system
    assert main(["serve", "--policy", str(POLICIES), "--insecure-http", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err == f"kcel serve needs {package}: pip install 'kcel[serve]'\n"


def test_serve_refuses_policies_that_do_not_exist(capsys: pytest.CaptureFixture[str]) -> None:
    """A typo would serve no policy at all, allowing every request."""
    assert main(["serve", "--policy", "nope/", "--insecure-http", "--port", "0"]) == 2
    assert capsys.readouterr().err == "kcel serve: nope/: no such file or directory\n"


def test_serve_help_names_both_webhooks(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "/validate" in text and "/mutate" in text and "MutatingAdmissionPolicies" in text


def test_a_client_ca_needs_tls(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--policy", str(POLICIES), "--insecure-http", "--client-ca", "ca.pem", "--port", "0"]) == 2
    assert "--client-ca needs TLS" in capsys.readouterr().err
