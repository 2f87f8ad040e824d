"""The other places Kubernetes runs CEL, each as upstream compiles and evaluates it: admission webhook
matchConditions (`webhooks`), Dynamic Resource Allocation device selectors (`dra`), structured authentication
(`authentication`) and authorization (`authorization`) configuration.

Every surface module offers the same two entry points, which `kcel eval --env`, the REPL and `kcel check` use:

- `ENVIRONMENTS`: `{name: function(k8s_version) -> kcel.Env}`, the CEL environments it compiles expressions in
  (`webhook-match`, `dra-selector`, `authn-claims`, `authn-user`, `authz-match`);
- `KINDS` and `check(document, where, k8s_version) -> Checked`: the objects it knows (by apiVersion group and kind)
  and what the API server (or the component that loads the file) reports when it is created or loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Checked:
    """What checking one object found: `errors` in upstream's field-path wording (any error: the object would be
    rejected), `warnings`, and how many CEL expressions it holds."""

    kind: str
    name: str
    expressions: int
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    @property
    def valid(self) -> bool:
        return not self.errors
