"""`kcel lsp`'s lints (kcel.k8s.rules.lints) without a client: on a YAML CRD's rule and on Go markers, at the
characters they concern, a Warning when the newest API server is concerned and Information otherwise."""

from __future__ import annotations

from pathlib import Path

from kcel.lsp.analysis import analyze
from kcel.lsp.gomarkers import go_analysis

ROOT = Path(__file__).resolve().parents[2]
CRD = (ROOT / "examples" / "widget-crd.yaml").read_text(encoding="utf-8")

GO_TYPES = """package v1

// NetworkSpec for Ceph (rook/rook#13693: gofmt curled the '' of the second rule)
// +kubebuilder:validation:XValidation:message="at least one network selector must be specified when using multus",rule="!has(self.provider) || (self.provider != 'multus' || (self.provider == 'multus' && size(self.selectors) > 0))"
// +kubebuilder:validation:XValidation:message="the legacy hostNetwork setting can only be set if the network.provider is set to the empty string",rule="(self.hostNetwork != true) || (self.provider  ==  \u201d)"
// +kubebuilder:validation:XValidation:rule=self.selectors.all(s, s != ''),message="no empty selector"
type NetworkSpec struct {
	Provider string `json:"provider,omitempty"`
}
"""  # noqa: E501


def test_a_curled_quote_and_a_cut_rule_in_go_markers_are_shown_where_they_are() -> None:
    found = [d for d in go_analysis(GO_TYPES, None, None).diagnostics if "(lint " in d.message]
    assert [(d.severity, GO_TYPES[d.start : d.end]) for d in found] == [("warning", "\u201d"), ("warning", ",")]
    curly, comma = found
    assert curly.message.endswith("(lint curly-quote, every Kubernetes version)")
    assert "fix: '' instead" in curly.message
    assert GO_TYPES[: comma.start].endswith("rule=self.selectors.all(s")
    assert "fix: quote it with backquotes: rule=`self.selectors.all(s, s != '')`" in comma.message
    fixed = GO_TYPES.replace("\u201d", "''").replace(
        "rule=self.selectors.all(s, s != '')", "rule=`self.selectors.all(s, s != '')`"
    )
    assert [d for d in go_analysis(fixed, None, None).diagnostics if "(lint " in d.message] == []


def test_a_reserved_word_in_a_crd_rule_is_information_at_the_newest_version() -> None:
    text = CRD.replace("self.replicas <= self.maxReplicas", "!has(self.namespace) || self.namespace != ''", 1)
    text = text.replace(
        "replicas: {type: integer}", "replicas: {type: integer}\n                namespace: {type: string}", 1
    )
    analysis = analyze(text, "1.37")
    (lint,) = [d for d in analysis.diagnostics if "(lint " in d.message][:1]
    assert lint.severity == "information" and text[lint.start : lint.end] == "namespace"
    assert lint.message.endswith("(lint reserved-field-name, Kubernetes 1.30-1.31)")
    assert not [d for d in analysis.diagnostics if d.severity == "error"]  # 1.37 accepts it
    at_130 = analyze(text, "1.30").diagnostics
    assert any(d.severity == "error" and "undefined field 'namespace'" in d.message for d in at_130)
