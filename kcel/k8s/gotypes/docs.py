"""Descriptions from doc comments, with controller-gen's text handling (pkg/markers/zip.go extractDoc over
go/ast's CommentGroup.Text): marker lines dropped, comment markers and one space stripped, directives
(`//go:generate`, `//nolint:x`) dropped, blank lines collapsed, `TODO` lines dropped, nothing after a `---` line.

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors) and
the Go standard library's go/ast (BSD-style licence, Copyright 2009 The Go Authors).
"""

from __future__ import annotations

from kcel.k8s.gotypes.syntax import CommentGroup


def _is_marker(text: str) -> bool:
    return text.startswith("//") and text[2:].strip().startswith("+")


def _is_directive(body: str) -> bool:
    """go/ast's isDirective, of a `//` comment without its slashes."""
    if body.startswith(("line ", "extern ", "export ")):
        return True
    colon = body.find(":")
    if colon <= 0 or colon + 1 >= len(body):
        return False
    return all(("a" <= c <= "z" or "0" <= c <= "9") for i, c in enumerate(body[: colon + 2]) if i != colon)


def comment_text(comments: list[str]) -> str:
    """CommentGroup.Text: the comments' text, markers of comments removed, trailing spaces and blank lines gone."""
    lines: list[str] = []
    for text in comments:
        if text.startswith("//"):
            body = text[2:]
            if _is_directive(body):
                continue
            body = body[1:] if body.startswith(" ") else body
            lines.append(body)
        else:
            lines.extend(text[2:-2].split("\n"))
    lines = [line.rstrip(" \t\n\r\v\f") for line in lines]
    kept: list[str] = []
    for line in lines:
        if line != "" or (kept and kept[-1] != ""):
            kept.append(line)
    if kept and kept[-1] != "":
        kept.append("")
    return "\n".join(kept)


def description(group: CommentGroup | None) -> str:
    """The description controller-gen writes for a type or field documented by this comment group."""
    if group is None:
        return ""
    comments = [c.text for c in group.comments if not _is_marker(c.text)]
    asterisk = any(c.startswith("/*") for c in comments)
    lines = comment_text(comments).split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    out: list[str] = []
    in_code = False
    for line in lines:
        if asterisk:
            line = line.strip()
        if line.startswith(("```", "~~~")):
            in_code = not in_code
        if not in_code:
            if line.startswith("TODO"):
                continue
            if line.startswith("---"):
                break
        out.append(line)
    return "\n".join(out)
