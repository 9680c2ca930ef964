"""The Kubernetes manifests in ``k8s/`` (docs/deploy.md, Deployment).

Every manifest validates, strictly (no unknown field), against the Kubernetes JSON
schemas shipped inside the ``kubernetes-validate`` wheel (offline: no download), for the
oldest and the newest Kubernetes version we support. The kustomization lists every file;
names, labels and selectors agree; the probes point at real routes of the app (the app of
``infra.bootstrap``) that answer 200, on the port the server listens on; the ConfigMap
holds only variables the service reads (``Settings.from_env``) and valid values; the
migration Job runs the real ``migrate`` command; replicas stay >= 2 and the drain fits in
the grace period.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.cli import build_parser
from infra.settings import Settings, parse_database_url
from infra.worker import build_worker
from tests.apps import TEST_SETTINGS, make_app
from tests.documents import load_yaml_all

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.utils.latest_version())
API_SELECTOR = {"app.kubernetes.io/name": "shengji", "app.kubernetes.io/component": "api"}
PRESTOP_S = 5
DRAIN_MARGIN_S = 5
"""Closing streams (at most 2 s) and the store, after SHUTDOWN_TIMEOUT."""

Manifest = dict[str, Any]


def _documents(path: Path) -> list[Manifest]:
    return [d for d in load_yaml_all(path.read_text(encoding="utf-8")) if d]


MANIFESTS: dict[str, list[Manifest]] = {
    p.name: _documents(p) for p in sorted(K8S.glob("*.yaml")) if p.name != "kustomization.yaml"
}
KUSTOMIZATION: Manifest = _documents(K8S / "kustomization.yaml")[0]


def _one(kind: str) -> Manifest:
    found = [d for docs in MANIFESTS.values() for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def _deployment(component: str) -> Manifest:
    """The Deployment of the ``api`` replicas or of the ``worker``."""
    found = [
        d
        for docs in MANIFESTS.values()
        for d in docs
        if d["kind"] == "Deployment"
        and d["metadata"]["labels"]["app.kubernetes.io/component"] == component
    ]
    assert len(found) == 1, f"expected one {component} Deployment, found {len(found)}"
    return found[0]


def _workload(name: str) -> Manifest:
    """``api``, ``worker`` (the Deployments) or ``migrate`` (the Job)."""
    return _one("Job") if name == "migrate" else _deployment(name)


WORKLOADS = ("api", "worker", "migrate")


def _container(workload: Manifest) -> Manifest:
    containers = workload["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    found: Manifest = containers[0]
    return found


def _environment() -> dict[str, str]:
    """What a pod's ``envFrom`` gives it: the ConfigMap's data and the Secret's."""
    config = _one("ConfigMap")["data"]
    secret = _one("Secret")["stringData"]
    return {**config, **secret}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(make_app()) as c:
        yield c


# -- schemas --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize(
    ("name", "index"),
    [(name, i) for name, docs in MANIFESTS.items() for i in range(len(docs))],
)
def test_every_manifest_validates_against_the_kubernetes_schema(
    name: str, index: int, version: str
) -> None:
    document = MANIFESTS[name][index]
    kubernetes_validate.validate(document, version, strict=True)  # raises when invalid


@pytest.mark.parametrize(
    ("kind", "change", "error"),
    [
        ("Deployment", lambda d: d["spec"].update(replica=2), "Additional properties"),
        ("Deployment", lambda d: d["spec"].update(replicas="two"), "is not of type"),
        ("Service", lambda d: d["spec"]["ports"][0].pop("port"), "'port' is a required"),
        ("HorizontalPodAutoscaler", lambda d: d["spec"].pop("scaleTargetRef"), "required"),
    ],
)
def test_the_validator_rejects_a_broken_manifest(
    kind: str, change: Any, error: str
) -> None:  # the validation above can fail
    broken = copy.deepcopy(_deployment("api") if kind == "Deployment" else _one(kind))
    change(broken)
    with pytest.raises(kubernetes_validate.ValidationError, match=error):
        kubernetes_validate.validate(broken, KUBERNETES_VERSIONS[-1], strict=True)


def test_the_schemas_come_from_the_installed_package() -> None:
    """No network: the wheel carries the schemas of every version it validates."""
    schemas = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    for version in KUBERNETES_VERSIONS:
        minor = ".".join(version.split(".")[:2])
        assert (schemas / f"v{minor}.0-local-strict" / "deployment-apps-v1.json").is_file()


# -- the kustomization ----------------------------------------------------------------------


def test_the_kustomization_lists_every_manifest() -> None:
    assert KUSTOMIZATION["kind"] == "Kustomization"
    resources = KUSTOMIZATION["resources"]
    assert sorted(resources) == sorted(MANIFESTS)
    assert len(resources) == len(set(resources))


def test_the_kustomization_sets_the_image_of_every_container() -> None:
    images = {i["name"] for i in KUSTOMIZATION["images"]}
    used = {_container(_workload(name))["image"] for name in WORKLOADS}
    assert used == images == {"shengji"}


@pytest.mark.parametrize(
    "kind",
    ["ConfigMap", "Secret", "Job", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"],
)  # fmt: skip
def test_each_kind_is_there_once(kind: str) -> None:
    _one(kind)


# -- names and selectors agree --------------------------------------------------------------


def test_selectors_match_the_api_pods() -> None:
    deployment = _deployment("api")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == API_SELECTOR
    assert API_SELECTOR.items() <= pod_labels.items()
    assert _one("Service")["spec"]["selector"] == API_SELECTOR
    assert _one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"] == API_SELECTOR
    job_labels = _one("Job")["spec"]["template"]["metadata"]["labels"]
    assert not API_SELECTOR.items() <= job_labels.items()  # the Service never routes there


def test_the_autoscaler_scales_the_deployment_on_cpu() -> None:
    hpa = _one("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == (
        "Deployment",
        _deployment("api")["metadata"]["name"],
    )
    assert hpa["spec"]["minReplicas"] >= 2
    assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    requests = _container(_deployment("api"))["resources"]["requests"]
    assert "cpu" in requests  # utilization is measured against the request


def test_replicas_and_the_disruption_budget_keep_a_pod_serving() -> None:
    deployment = _deployment("api")
    assert deployment["spec"]["replicas"] >= 2
    assert deployment["spec"]["replicas"] == _one("HorizontalPodAutoscaler")["spec"]["minReplicas"]
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert 1 <= _one("PodDisruptionBudget")["spec"]["minAvailable"] < deployment["spec"]["replicas"]


@pytest.mark.parametrize("name", WORKLOADS)
def test_pods_read_the_configmap_and_the_secret(name: str) -> None:
    refs = _container(_workload(name))["envFrom"]
    assert {"configMapRef": {"name": _one("ConfigMap")["metadata"]["name"]}} in refs
    assert {"secretRef": {"name": _one("Secret")["metadata"]["name"]}} in refs


# -- probes and ports -----------------------------------------------------------------------


def _probes(component: str = "api") -> list[tuple[str, Manifest]]:
    container = _container(_deployment(component))
    return [(kind, container[kind]) for kind in ("startupProbe", "readinessProbe", "livenessProbe")]


@pytest.mark.parametrize(
    ("probe", "path"),
    [("startupProbe", "/healthz"), ("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")],
)
def test_probes_point_at_the_health_routes(
    probe: str, path: str, client: TestClient[Litestar]
) -> None:
    spec = dict(_probes())[probe]
    assert spec["httpGet"]["path"] == path
    routes = {r.path for r in client.app.routes if "GET" in getattr(r, "methods", ())}
    assert path in routes  # a real route of the app
    answer = client.get(path)
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("probe", ["startupProbe", "readinessProbe", "livenessProbe"])
def test_probes_use_the_port_the_server_listens_on(probe: str) -> None:
    container = _container(_deployment("api"))
    port = dict(_probes())[probe]["httpGet"]["port"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    settings = Settings.from_env(_environment())
    assert ports[port] == settings.port
    assert settings.host == "0.0.0.0"  # reachable from the kubelet, not loopback only


def test_the_readiness_probe_waits_longer_than_the_store_probe() -> None:
    # api.health: /readyz gives the store 2 s before answering 503
    assert dict(_probes())["readinessProbe"]["timeoutSeconds"] > 2


def test_the_startup_probe_outlasts_the_wait_for_the_schema() -> None:
    startup = dict(_probes())["startupProbe"]
    settings = Settings.from_env(_environment())
    assert startup["periodSeconds"] * startup["failureThreshold"] > settings.schema_wait_timeout


def test_the_service_targets_the_named_port() -> None:
    ports = _one("Service")["spec"]["ports"]
    named = {p["name"] for p in _container(_deployment("api"))["ports"]}
    assert [p["targetPort"] for p in ports] == ["http"]
    assert named == {"http"}


# -- graceful drain -------------------------------------------------------------------------


def test_the_grace_period_covers_the_pause_and_the_drain() -> None:
    pod = _deployment("api")["spec"]["template"]["spec"]
    pre_stop = _container(_deployment("api"))["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop == ["sleep", str(PRESTOP_S)]
    shutdown = Settings.from_env(_environment()).shutdown_timeout
    assert pod["terminationGracePeriodSeconds"] >= PRESTOP_S + shutdown + DRAIN_MARGIN_S


# -- configuration --------------------------------------------------------------------------


class _Recording(Mapping[str, str]):
    """An environment that remembers which variables were read."""

    def __init__(self, data: Mapping[str, str]) -> None:
        self.data = dict(data)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return self.data.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def _read_settings(env: Mapping[str, str]) -> None:
    """The service's one settings reader."""
    Settings.from_env(env)


SQLITE_ONLY = frozenset({"SQLITE_PATH", "SQLITE_LOCK_TIMEOUT"})
"""Settings of the embedded store: the pods run on PostgreSQL."""


def test_the_configmap_holds_only_settings_the_service_reads() -> None:
    env = _Recording(_environment())
    _read_settings(env)
    unread = set(_one("ConfigMap")["data"]) - env.read
    assert not unread, f"ConfigMap keys no setting reads: {sorted(unread)}"


def test_the_manifests_set_every_setting_the_service_reads() -> None:
    env = _Recording(_environment())
    _read_settings(env)
    given = set(_one("ConfigMap")["data"]) | set(_one("Secret")["stringData"])
    missing = env.read - given - SQLITE_ONLY
    assert not missing, f"settings the pods do not set: {sorted(missing)}"
    assert "OPERATOR_TOKEN" not in _one("ConfigMap")["data"]  # a secret, not configuration


def test_the_pods_settings_are_valid_and_postgres_without_table_creation() -> None:
    settings = Settings.from_env(_environment())
    assert settings.backend == "postgres"
    assert settings.create_tables is False  # the migration Job creates the schema
    assert all(isinstance(v, str) for v in _one("ConfigMap")["data"].values())


def test_the_secret_is_an_obvious_placeholder() -> None:
    secret = _one("Secret")
    url = secret["stringData"]["DATABASE_URL"]
    target = parse_database_url(url)  # well-formed, so the example shows the format
    assert target.password == "CHANGE-ME"
    assert target.host.endswith(".invalid")  # RFC 2606: resolves nowhere
    assert "data" not in secret
    operator = secret["stringData"]["OPERATOR_TOKEN"]
    assert operator.startswith("CHANGE-ME")
    assert Settings.from_env(_environment()).operator_token == operator  # long enough


# -- the migration Job ----------------------------------------------------------------------


def test_the_job_runs_the_real_migrate_command() -> None:
    job = _one("Job")
    command = _container(job)["command"]
    assert command[:3] == ["python", "-m", "infra.cli"]
    args = build_parser().parse_args(command[3:])
    assert args.command == "migrate" and not args.check
    assert job["spec"]["template"]["spec"]["restartPolicy"] in {"Never", "OnFailure"}
    assert job["spec"]["backoffLimit"] >= 1  # retried while the database starts


# -- security -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORKLOADS)
def test_pods_run_as_non_root_on_a_read_only_filesystem(name: str) -> None:
    workload = _workload(name)
    pod = workload["spec"]["template"]["spec"]
    container = _container(workload)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["automountServiceAccountToken"] is False
    context = container["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"]["drop"] == ["ALL"]
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/tmp" in mounts  # the only writable place


@pytest.mark.parametrize("name", WORKLOADS)
def test_containers_have_requests_and_limits(name: str) -> None:
    resources = _container(_workload(name))["resources"]
    for side in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(resources[side])


# -- the worker -------------------------------------------------------------------------------


def test_the_worker_runs_the_real_worker_command_beside_the_api() -> None:
    worker = _deployment("worker")
    command = _container(worker)["command"]
    assert command[:3] == ["python", "-m", "infra.cli"]
    assert build_parser().parse_args(command[3:]).command == "worker"
    env = {**_environment(), **{e["name"]: e["value"] for e in _container(worker)["env"]}}
    assert Settings.from_env(env).process_role == "worker"
    assert Settings.from_env(_environment()).process_role == "api"  # the API replicas
    labels = worker["spec"]["template"]["metadata"]["labels"]
    assert not API_SELECTOR.items() <= labels.items()  # the Service never routes there
    assert worker["spec"]["replicas"] >= 1


@pytest.mark.parametrize(
    ("probe", "path"),
    [("startupProbe", "/healthz"), ("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")],
)
def test_the_workers_probes_answer_on_a_worker(probe: str, path: str) -> None:
    spec = dict(_probes("worker"))[probe]
    assert spec["httpGet"]["path"] == path
    ports = {p["name"]: p["containerPort"] for p in _container(_deployment("worker"))["ports"]}
    assert ports[spec["httpGet"]["port"]] == Settings.from_env(_environment()).port
    with TestClient(build_worker(TEST_SETTINGS)) as worker:  # the worker's own server
        assert worker.get(path).status_code == 200
        assert worker.get("/v1/matches").status_code == 404  # a worker serves no API
