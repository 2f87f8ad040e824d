"""The inputs of `evaluate.py`: Kubernetes validation rules over JSON-shaped objects, each with a hand-written twin."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

Activation = Mapping[str, Any]


class Rule(NamedTuple):
    """One expression, the variables it is evaluated with, and a Python function that does the same check."""

    id: str
    expr: str
    activation: Activation
    hand: Callable[[Activation], object]


def as_json(value: Any) -> Any:
    """What the API server hands a validator: exactly the types `json.loads` returns."""
    return json.loads(json.dumps(value))


def container(name: str, image: str, port: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "REGION", "value": "eu-west-1"}],
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "securityContext": {"privileged": False, "runAsNonRoot": True, "readOnlyRootFilesystem": True},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
    }


CONTAINERS = [
    container("web", "registry.example.com/shop/web:1.42.0", 8080),
    container("metrics", "registry.example.com/infra/metrics-sidecar:0.9.3", 9090),
    container("proxy", "registry.example.com/infra/envoy:1.29.1", 15001),
]

LABELS = {
    "app.kubernetes.io/name": "web",
    "app.kubernetes.io/part-of": "shop",
    "app.kubernetes.io/version": "1.42.0",
    "team": "payments",
    "tier": "frontend",
    "app": "web",
}

METADATA = {
    "name": "web-frontend",
    "namespace": "shop-prod",
    "uid": "6f1c3b0e-8a4d-4f1e-9b9a-2c7d5e4f3a21",
    "resourceVersion": "48213377",
    "generation": 12,
    "labels": LABELS,
    "annotations": {"deployment.kubernetes.io/revision": "12", "owner": "payments@example.com"},
}

POD = as_json(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**METADATA, "name": "web-frontend-7d9f8b6c5-x2k4p"},
        "spec": {"containers": CONTAINERS, "serviceAccountName": "web", "nodeSelector": {"pool": "general"}},
    }
)

DEPLOYMENT = as_json(
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": METADATA,
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": LABELS}, "spec": {"containers": CONTAINERS}},
        },
    }
)

SCALING = as_json({"replicas": 4, "minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 70})

GATEWAY = as_json(
    {
        "spec": {
            "hostname": "shop.example.com",
            "port": 443,
            "tls": {"secretName": "shop-example-com-tls", "mode": "Terminate"},
        }
    }
)

SERVICE_SPEC = as_json(
    {
        "type": "ClusterIP",
        "selector": {"app": "web"},
        "ports": [
            {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
            {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"},
            {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"},
        ],
    }
)

NAMED = as_json({"name": "web-frontend-canary", "weight": 10})

REQUEST = as_json(
    {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "operation": "UPDATE",
        "namespace": "shop-prod",
        "userInfo": {"username": "bob", "uid": "1042", "groups": ["system:authenticated", "payments-admins"]},
        "dryRun": False,
    }
)

FEATURES = as_json(
    {"items": [{"name": f"feature-{i:02d}", "enabled": i % 3 == 0, "rollout": i * 5} for i in range(20)]}
)

VOLUME_NEW = as_json({"storageClassName": "fast-ssd", "capacity": "10Gi", "accessModes": ["ReadWriteOnce"]})
VOLUME_OLD = as_json({"storageClassName": "fast-ssd", "capacity": "5Gi", "accessModes": ["ReadWriteOnce"]})

DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_LABEL_RE = re.compile(DNS_LABEL)  # CEL matches() is an unanchored search; this pattern anchors itself


# The hand-written twins: what a Python programmer would write for the same check over the same dicts,
# doing the same work (the same traversal, no short cuts a CEL evaluator could not take).
def replicas_max(a: Activation) -> object:
    s = a["self"]
    return s["replicas"] <= s["maxReplicas"]


def replicas_range(a: Activation) -> object:
    s = a["self"]
    return s["minReplicas"] <= s["replicas"] and s["replicas"] <= s["maxReplicas"]


def images_registry(a: Activation) -> object:
    return all(c["image"].startswith("registry.example.com/") for c in a["self"]["spec"]["containers"])


def tls_secret(a: Activation) -> object:
    spec = a["self"]["spec"]
    return spec["tls"]["secretName"] != "" if "tls" in spec else True


def label_app(a: Activation) -> object:
    return any(k == "app" for k in a["object"]["metadata"]["labels"])


def ports_unique_size(a: Activation) -> object:
    ports = a["self"]["ports"]
    return len([p["port"] for p in ports]) == len(ports)


def name_dns_label(a: Activation) -> object:
    return DNS_LABEL_RE.search(a["self"]["name"]) is not None


def name_size(a: Activation) -> object:
    return len(a["self"]["name"]) <= 63


def user_allowed(a: Activation) -> object:
    return a["request"]["userInfo"]["username"] in ["alice", "bob"]


def privileged(a: Activation) -> object:
    containers = a["object"]["spec"]["template"]["spec"]["containers"]
    return any(c["securityContext"]["privileged"] == True for c in containers)  # noqa: E712 (the CEL rule's `== true`)


def enabled_items(a: Activation) -> object:
    return len([i for i in a["self"]["items"] if i["enabled"]]) < 10


def immutable_class(a: Activation) -> object:
    old = a["oldSelf"]
    return "storageClassName" not in old or a["self"]["storageClassName"] == old["storageClassName"]


DEPLOYMENT_STORED = as_json(DEPLOYMENT)  # the same content in another object, as decoded from storage
STRINGS = as_json({"wanted": [f"team-{i}" for i in range(1_000)], "allowed": [f"team-{i}" for i in range(999, -1, -1)]})
LABELS_1000 = as_json({"labels": {f"example.com/key-{i}": f"value-{i}" for i in range(1_000)}})


def unchanged(a: Activation) -> object:
    return a["self"] == a["oldSelf"]  # right for JSON without bools beside numbers or NaN, as here


def all_allowed(a: Activation) -> object:
    allowed = set(a["self"]["allowed"])
    return all(team in allowed for team in a["self"]["wanted"])


def labels_prefixed(a: Activation) -> object:
    labels = a["self"]["labels"]
    return all(labels[key].startswith("value-") for key in labels)


WORKLOAD = [
    Rule("replicas<=max", "self.replicas <= self.maxReplicas", {"self": SCALING}, replicas_max),
    Rule(
        "min<=replicas<=max",
        "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
        {"self": SCALING},
        replicas_range,
    ),
    Rule(
        "images.all(startsWith)",
        "self.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
        {"self": POD},
        images_registry,
    ),
    Rule(
        "has(tls) ? secret : true",
        "has(self.spec.tls) ? self.spec.tls.secretName != '' : true",
        {"self": GATEWAY},
        tls_secret,
    ),
    Rule("labels.exists(k == app)", "object.metadata.labels.exists(k, k == 'app')", {"object": DEPLOYMENT}, label_app),
    Rule(
        "ports.map().size()",
        "self.ports.map(p, p.port).size() == self.ports.size()",
        {"self": SERVICE_SPEC},
        ports_unique_size,
    ),
    Rule("name.matches(dns)", f"self.name.matches('{DNS_LABEL}')", {"self": NAMED}, name_dns_label),
    Rule("size(name) <= 63", "size(self.name) <= 63", {"self": NAMED}, name_size),
    Rule(
        "username in list",
        "request.userInfo.username in ['alice', 'bob']",
        {"request": REQUEST, "object": DEPLOYMENT},
        user_allowed,
    ),
    Rule(
        "containers.exists(privileged)",
        "object.spec.template.spec.containers.exists(c, c.securityContext.privileged == true)",
        {"object": DEPLOYMENT},
        privileged,
    ),
    Rule(
        "items.filter().size() < 10", "self.items.filter(i, i.enabled).size() < 10", {"self": FEATURES}, enabled_items
    ),
    Rule(
        "transition (oldSelf)",
        "!has(oldSelf.storageClassName) || self.storageClassName == oldSelf.storageClassName",
        {"self": VOLUME_NEW, "oldSelf": VOLUME_OLD},
        immutable_class,
    ),
    Rule(
        "self == oldSelf (Deployment)", "self == oldSelf", {"self": DEPLOYMENT, "oldSelf": DEPLOYMENT_STORED}, unchanged
    ),  # fmt: skip
    Rule("all(x in list) 1,000 x 1,000", "self.wanted.all(t, t in self.allowed)", {"self": STRINGS}, all_allowed),
    Rule(
        "all(labels[k]) 1,000 keys",
        "self.labels.all(k, self.labels[k].startsWith('value-'))",
        {"self": LABELS_1000},
        labels_prefixed,
    ),
]


# Comprehensions over plain int lists: every macro visits every element (all() stays true, exists() stays false).
def map_double(a: Activation) -> object:
    return len([x * 2 for x in a["self"]["items"]])


def filter_even(a: Activation) -> object:
    return len([x for x in a["self"]["items"] if x % 2 == 0])


def all_nonnegative(a: Activation) -> object:
    return all(x >= 0 for x in a["self"]["items"])


def exists_minus_one(a: Activation) -> object:
    return any(x == -1 for x in a["self"]["items"])


COMPREHENSIONS = [
    ("map(x * 2).size()", "self.items.map(x, x * 2).size()", map_double),
    ("filter(x % 2 == 0).size()", "self.items.filter(x, x % 2 == 0).size()", filter_even),
    ("all(x >= 0)", "self.items.all(x, x >= 0)", all_nonnegative),
    ("exists(x == -1)", "self.items.exists(x, x == -1)", exists_minus_one),
]

SIZES = (1_000, 10_000)


def comprehension_rules(size: int) -> list[Rule]:
    activation = {"self": as_json({"items": list(range(size))})}
    return [Rule(f"{name} @{size}", expr, activation, hand) for name, expr, hand in COMPREHENSIONS]
