"""`kcel audit`: what new admission policies or a new CRD would do to the objects a cluster already stores, read
from a snapshot (`kubectl get -A -o yaml`), before the change is applied.

- kcel.audit.checks: each stored object through the policies (as an update that changes nothing, and as a
  create) and through the new CRD (create, update with ratcheting, fields pruned): a Result per finding;
- kcel.audit.summary: results counted by policy, binding and outcome, with a few examples each;
- kcel.audit.reports: the text summary, JSON, and PolicyReports (wgpolicyk8s.io/v1alpha2);
- kcel.audit.command: the command, reading the snapshot as a stream and checking it on every core.
"""
