"""RBACAuthorizer against the kube-apiserver's RBAC rules (plugin/pkg/auth/authorizer/rbac and its tests).

A realistic cluster policy is written as YAML below; each row asks one question and expects the
decision Go's authorizer gives, reason text included.
"""

from __future__ import annotations

from typing import Any

import pytest

import kcel
from kcel.k8s.authorization.rbac import (
    ClusterRole,
    PolicyRule,
    RBACAuthorizer,
    RoleBinding,
    RoleRef,
    Subject,
    rule_allows,
)
from kcel.libs.k8s_authz import (
    AUTHORIZER_TYPE,
    LIBRARY,
    Attributes,
    Decision,
    UserInfo,
    Verdict,
    authorizer_value,
    service_account_user,
)

POLICY = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: pod-reader
rules:
- apiGroups: [""]
  resources: ["pods", "pods/log"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: scaler
rules:
- apiGroups: ["apps"]
  resources: ["*/scale"]
  verbs: ["update", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: health-checker
rules:
- nonResourceURLs: ["/healthz", "/healthz/*", "/metrics"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: super-admin
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
- nonResourceURLs: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: monitoring
aggregationRule:
  clusterRoleSelectors:
  - matchLabels:
      rbac.example.com/aggregate-to-monitoring: "true"
rules: []  # filled in by the aggregation controller
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: monitoring-endpoints
  labels:
    rbac.example.com/aggregate-to-monitoring: "true"
rules:
- apiGroups: [""]
  resources: ["endpoints", "services"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: monitoring-metrics
  labels:
    rbac.example.com/aggregate-to-monitoring: "true"
rules:
- apiGroups: ["metrics.k8s.io"]
  resources: ["pods", "nodes"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: configmap-updater
  namespace: team-a
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: ["app-config"]
  verbs: ["get", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: deployer
  namespace: team-a
rules:
- apiGroups: ["apps", "extensions"]
  resources: ["deployments", "deployments/status"]
  verbs: ["get", "list", "create", "update", "patch", "delete"]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: deployer
  namespace: team-a
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: developers-read-pods
subjects:
- kind: Group
  name: developers
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: ClusterRole
  name: pod-reader
  apiGroup: rbac.authorization.k8s.io
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: health
subjects:
- kind: Group
  name: system:authenticated
- kind: Group
  name: system:unauthenticated
roleRef:
  kind: ClusterRole
  name: health-checker
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: root
subjects:
- kind: User
  name: root
roleRef:
  kind: ClusterRole
  name: super-admin
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ci-scales
subjects:
- kind: Group
  name: system:serviceaccounts:ci
roleRef:
  kind: ClusterRole
  name: scaler
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ghosts
subjects:
- kind: Group
  name: ghosts
roleRef:
  kind: ClusterRole
  name: does-not-exist
---
apiVersion: rbac.authorization.k8s.io/v1
kind: List
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata:
    name: config
    namespace: team-a
  subjects:
  - kind: User
    name: alice
  roleRef:
    kind: Role
    name: configmap-updater
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata:
    name: deployers
    namespace: team-a
  subjects:
  - kind: Group
    name: team-a-devs
  - kind: ServiceAccount
    name: deployer
  roleRef:
    kind: Role
    name: deployer
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata:
    name: prometheus
    namespace: team-a
  subjects:
  - kind: ServiceAccount
    name: prometheus
    namespace: monitoring
  roleRef:
    kind: ClusterRole
    name: monitoring
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata:
    name: all-service-accounts-read-pods
    namespace: team-b
  subjects:
  - kind: Group
    name: system:serviceaccounts
  roleRef:
    kind: ClusterRole
    name: pod-reader
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata:
    name: broken
    namespace: team-a
  subjects:
  - kind: User
    name: bob
  roleRef:
    kind: Role
    name: missing
"""

RBAC = RBACAuthorizer.from_yaml(POLICY)

ALICE = UserInfo("alice", groups=("developers", "system:authenticated"))
BOB = UserInfo("bob", groups=("system:authenticated",))
CAROL = UserInfo("carol", groups=("team-a-devs", "system:authenticated"))
ROOT = UserInfo("root")
ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))
GHOST = UserInfo("casper", groups=("ghosts",))
DEPLOYER = service_account_user("team-a", "deployer")
OTHER_DEPLOYER = service_account_user("team-b", "deployer")
PROMETHEUS = service_account_user("monitoring", "prometheus")
CI_BOT = service_account_user("ci", "bot")


def res(
    user: UserInfo, verb: str, resource: str, ns: str = "", group: str = "", sub: str = "", name: str = ""
) -> Attributes:
    """A resource request as the CEL library builds it (API version "*")."""
    return Attributes(user, verb, True, api_group=group, api_version="*", resource=resource, subresource=sub,
                      namespace=ns, name=name)  # fmt: skip


def url(user: UserInfo, verb: str, path: str) -> Attributes:
    return Attributes(user, verb, False, path=path)


def allowed(source: str) -> Decision:
    return Decision(Verdict.ALLOW, f"RBAC: allowed by {source}")


NO = Decision(Verdict.NO_OPINION, "")
PODS_TO_DEVS = 'ClusterRoleBinding "developers-read-pods" of ClusterRole "pod-reader" to Group "developers"'
HEALTH = 'ClusterRoleBinding "health" of ClusterRole "health-checker"'
ROOT_ALL = 'ClusterRoleBinding "root" of ClusterRole "super-admin" to User "root"'
CONFIG = 'RoleBinding "config/team-a" of Role "configmap-updater" to User "alice"'
DEPLOYERS = 'RoleBinding "deployers/team-a" of Role "deployer"'
PROM = 'RoleBinding "prometheus/team-a" of ClusterRole "monitoring" to ServiceAccount "prometheus/monitoring"'
TEAM_B_SAS = (
    'RoleBinding "all-service-accounts-read-pods/team-b" of ClusterRole "pod-reader" to Group "system:serviceaccounts"'
)
CI = 'ClusterRoleBinding "ci-scales" of ClusterRole "scaler" to Group "system:serviceaccounts:ci"'

ROWS: list[tuple[str, Attributes, Decision]] = [
    # verbs and cluster-wide bindings through a group
    ("group reads pods anywhere", res(ALICE, "get", "pods", "team-z"), allowed(PODS_TO_DEVS)),
    ("group lists pods cluster-wide", res(ALICE, "list", "pods"), allowed(PODS_TO_DEVS)),
    ("verb not granted", res(ALICE, "delete", "pods", "team-z"), NO),
    ("verbs are case-sensitive", res(ALICE, "GET", "pods", "team-z"), NO),
    ("group must match", res(ALICE, "get", "pods", "team-z", group="apps"), NO),
    ("resource must match", res(ALICE, "get", "secrets", "team-z"), NO),
    ("resources are case-sensitive", res(ALICE, "get", "Pods", "team-z"), NO),
    # subresources
    ("listed subresource", res(ALICE, "get", "pods", "team-z", sub="log"), allowed(PODS_TO_DEVS)),
    ("unlisted subresource", res(ALICE, "get", "pods", "team-z", sub="exec"), NO),
    ("resource rule does not cover subresources", res(ALICE, "get", "pods", "team-z", sub="status"), NO),
    ("*/scale matches any resource's scale", res(CI_BOT, "update", "deployments", "x", "apps", "scale"), allowed(CI)),
    ("*/scale for statefulsets too", res(CI_BOT, "patch", "statefulsets", "x", "apps", "scale"), allowed(CI)),
    ("*/scale is not the resource itself", res(CI_BOT, "update", "deployments", "x", "apps"), NO),
    ("*/scale is not another subresource", res(CI_BOT, "update", "deployments", "x", "apps", "status"), NO),
    ("*/scale only in its groups", res(CI_BOT, "update", "replicationcontrollers", "x", "", "scale"), NO),
    # resource names
    ("named configmap", res(ALICE, "update", "configmaps", "team-a", name="app-config"), allowed(CONFIG)),
    ("other configmap", res(ALICE, "update", "configmaps", "team-a", name="db-config"), NO),
    ("resourceNames cannot match a list (no name)", res(ALICE, "get", "configmaps", "team-a"), NO),
    ("role binding is namespaced", res(ALICE, "get", "configmaps", "team-b", name="app-config"), NO),
    ("role binding ignored cluster-wide", res(ALICE, "get", "configmaps", "", name="app-config"), NO),
    # API groups, groups of users, service accounts in the binding's namespace
    ("group member deploys", res(CAROL, "create", "deployments", "team-a", "apps"),
     allowed(DEPLOYERS + ' to Group "team-a-devs"')),
    ("second apiGroup of the rule", res(CAROL, "delete", "deployments", "team-a", "extensions"),
     allowed(DEPLOYERS + ' to Group "team-a-devs"')),
    ("deployments/status listed", res(CAROL, "update", "deployments", "team-a", "apps", "status"),
     allowed(DEPLOYERS + ' to Group "team-a-devs"')),
    ("deployments/scale not listed", res(CAROL, "update", "deployments", "team-a", "apps", "scale"), NO),
    ("core group is not apps", res(CAROL, "create", "deployments", "team-a"), NO),
    ("SA subject defaults to binding namespace", res(DEPLOYER, "patch", "deployments", "team-a", "apps"),
     allowed(DEPLOYERS + ' to ServiceAccount "deployer/team-a"')),
    ("same SA name in another namespace", res(OTHER_DEPLOYER, "patch", "deployments", "team-a", "apps"), NO),
    ("SA with explicit namespace", res(PROMETHEUS, "list", "endpoints", "team-a"), allowed(PROM)),
    ("system:serviceaccounts group", res(OTHER_DEPLOYER, "watch", "pods", "team-b"), allowed(TEAM_B_SAS)),
    ("system:serviceaccounts group only in team-b", res(OTHER_DEPLOYER, "watch", "pods", "team-a"), NO),
    ("system:serviceaccounts:ci group", res(CI_BOT, "patch", "deployments", "prod", "apps", "scale"), allowed(CI)),
    ("other SA namespaces are not in ci", res(DEPLOYER, "patch", "deployments", "prod", "apps", "scale"), NO),
    # aggregated cluster role
    ("aggregated from monitoring-endpoints", res(PROMETHEUS, "watch", "services", "team-a"), allowed(PROM)),
    ("aggregated from monitoring-metrics", res(PROMETHEUS, "get", "nodes", "team-a", "metrics.k8s.io"), allowed(PROM)),
    ("aggregation grants no more", res(PROMETHEUS, "delete", "services", "team-a"), NO),
    ("aggregated role through a RoleBinding is namespaced", res(PROMETHEUS, "list", "endpoints", "team-b"), NO),
    # wildcards everywhere
    ("super-admin any resource", res(ROOT, "escalate", "clusterroles", "", "rbac.authorization.k8s.io"),
     allowed(ROOT_ALL)),
    ("super-admin subresource", res(ROOT, "create", "pods", "x", "", "eviction", "p"), allowed(ROOT_ALL)),
    ("super-admin any URL", url(ROOT, "post", "/anything/at/all"), allowed(ROOT_ALL)),
    # non-resource URLs
    ("exact URL", url(BOB, "get", "/healthz"), allowed(HEALTH + ' to Group "system:authenticated"')),
    ("URL prefix", url(BOB, "get", "/healthz/etcd"), allowed(HEALTH + ' to Group "system:authenticated"')),
    ("URL prefix needs the slash", url(BOB, "get", "/healthzz"), NO),
    ("unauthenticated group", url(ANONYMOUS, "get", "/metrics"),
     allowed(HEALTH + ' to Group "system:unauthenticated"')),
    ("URL verb", url(BOB, "post", "/healthz"), NO),
    ("unlisted URL", url(BOB, "get", "/version"), NO),
    ("URL rules do not grant resources", res(BOB, "get", "healthz"), NO),
    ("resource rules do not grant URLs", url(ALICE, "get", "/api/v1/pods"), NO),
    ("a service account has no system:authenticated by itself", url(CI_BOT, "get", "/healthz"), NO),
    # role resolution errors explain a "no opinion"
    ("missing role", res(BOB, "get", "pods", "team-a"),
     Decision(Verdict.NO_OPINION, 'RBAC: role.rbac.authorization.k8s.io "missing" not found')),
    ("missing role only matters in its namespace", res(BOB, "get", "pods", "team-b"), NO),
    ("missing cluster role", res(GHOST, "get", "pods"),
     Decision(Verdict.NO_OPINION, 'RBAC: clusterrole.rbac.authorization.k8s.io "does-not-exist" not found')),
]  # fmt: skip


@pytest.mark.parametrize(("attributes", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_policy(attributes: Attributes, expected: Decision) -> None:
    assert RBAC.authorize(attributes) == expected


def test_errors_aggregate_and_allows_win() -> None:
    two_errors = RBACAuthorizer.from_yaml(
        POLICY,
        """
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: weird, namespace: team-a}
subjects: [{kind: User, name: bob}]
roleRef: {kind: Secret, name: x}
""",
    )
    decision = two_errors.authorize(res(BOB, "get", "pods", "team-a"))
    reason = 'RBAC: [role.rbac.authorization.k8s.io "missing" not found, unsupported role reference kind: "Secret"]'
    assert decision == Decision(Verdict.NO_OPINION, reason)
    assert two_errors.authorize(url(BOB, "get", "/healthz")).verdict is Verdict.ALLOW


def test_rules_for() -> None:
    assert RBAC.rules_for(PROMETHEUS, "team-a") == [
        PolicyRule(("get", "list", "watch"), ("",), ("endpoints", "services")),
        PolicyRule(("get", "list"), ("metrics.k8s.io",), ("pods", "nodes")),
    ]
    assert RBAC.rules_for(PROMETHEUS) == []


# -- CEL end to end -----------------------------------------------------------------------------------

CEL_ROWS: list[tuple[str, UserInfo, Any]] = [
    ("authorizer.group('apps').resource('deployments').namespace('team-a').check('create').allowed()", CAROL, True),
    ("authorizer.group('apps').resource('deployments').namespace('team-b').check('create').allowed()", CAROL, False),
    ("authorizer.group('').resource('configmaps').namespace('team-a').name('app-config').check('update').allowed()",
     ALICE, True),
    ("authorizer.group('').resource('pods').subresource('log').namespace('x').check('get').reason()", ALICE,
     f"RBAC: allowed by {PODS_TO_DEVS}"),
    ("authorizer.path('/healthz/ready').check('get').allowed()", BOB, True),
    ("authorizer.path('/healthz/ready').check('get').allowed()", ROOT, True),
    ("authorizer.path('/healthz/ready').check('get').allowed()", CI_BOT, False),
    # authorizer.serviceAccount() asks as a service account, whoever sent the request
    ("authorizer.serviceAccount('team-a', 'deployer').group('apps').resource('deployments').namespace('team-a')"
     ".check('delete').allowed()", ALICE, True),
    ("authorizer.serviceAccount('team-b', 'reader').group('').resource('pods').namespace('team-b')"
     ".check('list').allowed()", ALICE, True),
    ("authorizer.serviceAccount('ci', 'x').group('apps').resource('statefulsets').subresource('scale')"
     ".namespace('p').check('patch').allowed()", ALICE, True),
    ("authorizer.group('').resource('pods').namespace('team-a').check('get').reason()", BOB,
     'RBAC: role.rbac.authorization.k8s.io "missing" not found'),
    ("authorizer.group('').resource('pods').namespace('team-a').check('get').errored()", BOB, False),
    # RBAC ignores selectors, and a bad selector is no reason to deny
    ("authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('!!')"
     ".check('list').allowed()", ALICE, True),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "user", "expected"), CEL_ROWS, ids=[r[0] for r in CEL_ROWS])
def test_cel(expr: str, user: UserInfo, expected: Any) -> None:
    env = kcel.Env(variables={"authorizer": AUTHORIZER_TYPE}, libraries=[*kcel.env.cel_libraries(), LIBRARY])
    assert env.compile(expr).evaluate({"authorizer": authorizer_value(RBAC, user)}) == expected


# -- Go's TestAuthorizer and TestRuleMatches ---------------------------------------------------------------


def rule(verbs: str, groups: str, resources: str, urls: str = "") -> PolicyRule:
    return PolicyRule(tuple(verbs.split(",")), tuple(groups.split(",")), tuple(resources.split(",")),
                      non_resource_urls=tuple(urls.split(",")))  # fmt: skip


def go_user(name: str, groups: str = "") -> UserInfo:
    return UserInfo(name, groups=tuple(groups.split(",")))


def namespace_admin(rules: PolicyRule) -> RBACAuthorizer:
    subjects = (Subject("User", "admin"), Subject("Group", "admins"))
    binding = RoleBinding("", "ns1", RoleRef("ClusterRole", "admin"), subjects)
    return RBACAuthorizer(cluster_roles=[ClusterRole("admin", (rules,))], role_bindings=[binding])


GO_ROWS: list[tuple[PolicyRule, Attributes, bool]] = [
    (rule("*", "*", "*", "*"), res(go_user("admin"), "get", "Pods", "ns1"), True),
    (rule("*", "*", "*", "*"), res(go_user("admin", "group1"), "watch", "Foobar", "ns1"), True),
    (rule("*", "*", "*", "*"), res(go_user("joe", "group1,admins"), "watch", "Foobar", "ns1"), True),
    (rule("*", "*", "*", "*"), res(go_user("admin"), "GET", "Pods", "ns2"), False),
    (rule("*", "*", "*", "*"), res(go_user("admin", "admins"), "GET", "Nodes"), False),
    (rule("*", "*", "pods", "*"), res(go_user("admin"), "get", "pods", "ns1"), True),
    (rule("*", "*", "pods", "*"), res(go_user("admin"), "get", "pods", "ns1", sub="status"), False),
    (rule("*", "*", "pods/status", "*"), res(go_user("admin"), "get", "pods", "ns1", sub="status"), True),
    (rule("*", "*", "pods/status", "*"), res(go_user("admin"), "get", "pods", "ns1"), False),
]  # fmt: skip


@pytest.mark.parametrize(("policy_rule", "attributes", "expected"), GO_ROWS)
def test_go_authorizer_table(policy_rule: PolicyRule, attributes: Attributes, expected: bool) -> None:
    assert (namespace_admin(policy_rule).authorize(attributes).verdict is Verdict.ALLOW) is expected


U = UserInfo()
RULE_ROWS: list[tuple[PolicyRule, Attributes, bool]] = [
    (rule("*", "group1", "resource1"), res(U, "verb1", "resource1", group="group1"), True),
    (rule("*", "group1", "resource1"), res(U, "verb1", "resource1", group="group2"), False),
    (rule("verb1", "*", "resource1"), res(U, "verb1", "resource1", group="group2"), True),
    (rule("verb1", "*", "resource1"), res(U, "verb2", "resource1", group="group2"), False),
    (rule("verb1", "group1", "*"), res(U, "verb1", "resource2", group="group1"), True),
    (rule("verb1,verb2", "group1,group2", "resource1,resource2"), res(U, "verb2", "resource2", group="group2"), True),
    (rule("*", "*", "resource1/subresource1"), res(U, "verb1", "resource1", sub="subresource1"), True),
    (rule("*", "*", "resource1/subresource1"), res(U, "verb1", "resource1", sub="subresource2"), False),
    (rule("*", "*", "resource1/subresource1"), res(U, "verb1", "resource2", sub="subresource1"), False),
    (rule("verb1", "", "", "*"), url(U, "verb1", "/foo/bar/one"), True),
    (rule("verb1", "", "", "*"), url(U, "verb2", "/foo"), False),
    (rule("verb1", "", "", "/foo/*"), url(U, "verb1", "/foo"), False),
    (rule("verb1", "", "", "/foo/*"), url(U, "verb1", "/foo/bar"), True),
    (rule("verb1", "", "", "/foo/*"), url(U, "verb1", "/foo/bar/one"), True),
    (rule("verb1", "", "", "/foo/*"), url(U, "verb1", "/foo/"), True),
    (rule("verb1", "", "", "/foo/**"), url(U, "verb1", "/foo/x"), True),  # every trailing star is trimmed
    (rule("verb1", "", "", "/foo"), url(U, "verb1", "/foo/"), False),
    (rule("verb1", "", "", "/foo/*"), res(U, "verb1", "foo"), False),
    (PolicyRule(("get",), ("",), ("pods",), ("a", "b")), res(U, "get", "pods", name="b"), True),
    (PolicyRule(("get",), ("",), ("pods",), ("a", "b")), res(U, "get", "pods", name="c"), False),
]  # fmt: skip


@pytest.mark.parametrize(("policy_rule", "attributes", "expected"), RULE_ROWS)
def test_rule_allows(policy_rule: PolicyRule, attributes: Attributes, expected: bool) -> None:
    assert rule_allows(attributes, policy_rule) is expected


# -- aggregation and loading ---------------------------------------------------------------------------------

AGGREGATION = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: view}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {aggregate-to-view: "true"}
rules: [{apiGroups: ["stale"], resources: ["x"], verbs: ["get"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: edit, labels: {aggregate-to-view: "true"}}
aggregationRule:
  clusterRoleSelectors:
  - matchExpressions: [{key: tier, operator: In, values: [edit, admin]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: b-edit-pods, labels: {tier: edit}}
rules: [{apiGroups: [""], resources: ["pods"], verbs: ["update"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: a-view-pods, labels: {aggregate-to-view: "true", tier: edit}}
rules:
- {apiGroups: [""], resources: ["pods"], verbs: ["get"]}
- {apiGroups: [""], resources: ["pods"], verbs: ["update"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: everything}
aggregationRule:
  clusterRoleSelectors: [{}]
"""


def test_aggregation() -> None:
    roles = RBACAuthorizer.from_yaml(AGGREGATION).cluster_roles
    get_pods = PolicyRule(("get",), ("",), ("pods",))
    update_pods = PolicyRule(("update",), ("",), ("pods",))
    # sorted by role name, duplicates dropped, its own stale rules replaced
    assert roles["edit"].rules == (get_pods, update_pods)
    # aggregated roles aggregate each other until nothing changes
    assert roles["view"].rules == (get_pods, update_pods)
    # an empty selector selects every other cluster role
    assert roles["everything"].rules == (get_pods, update_pods)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: x}\n"
         "aggregationRule: {clusterRoleSelectors: [{matchExpressions: [{key: a, operator: Gt, values: ['1']}]}]}",
         '"Gt" is not a valid label selector operator'),
        ("kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: x}\n"
         "aggregationRule: {clusterRoleSelectors: [{matchExpressions: [{key: a, operator: In}]}]}",
         "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"),
        ("kind: Role\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: x}\nrules: [{verbs: [on]}]",
         "verbs must be a list of strings"),
        ("kind: Role\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {}", "name must be a non-empty string"),
        ("- just a list", "expected a Kubernetes object"),
    ],
)  # fmt: skip
def test_invalid_yaml(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RBACAuthorizer.from_yaml(text)


def test_loading_details() -> None:
    loaded = RBACAuthorizer.from_yaml(
        """
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: no-namespace}
---
---
apiVersion: rbac.authorization.k8s.io/v1beta1
kind: RoleList
items:
- {apiVersion: rbac.authorization.k8s.io/v1beta1, kind: Role, metadata: {name: old, namespace: ns}}
---
apiVersion: example.com/v1
kind: Role
metadata: {name: not-rbac}
"""
    )
    assert sorted(loaded.roles) == [("default", "no-namespace"), ("ns", "old")]
