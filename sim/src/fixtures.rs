//! Builders of realistic API objects: what a real cluster returns, managedFields and all.
//!
//! Each builder starts from a healthy object and takes the changes a test needs; `build`
//! renders it at a given "now", so ages and timestamps are relative to the test's clock.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::api::Resource;

/// A whole cluster's objects, as a GET of each would return them.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub version: Value,
    pub nodes: Vec<Value>,
    pub pods: Vec<Value>,
    pub deployments: Vec<Value>,
    pub statefulsets: Vec<Value>,
    pub daemonsets: Vec<Value>,
    pub pvcs: Vec<Value>,
    pub events: Vec<Value>,
    /// APIServices; an aggregated one for `metrics.k8s.io` decides how its paths answer: 404
    /// without it, 503 while it is not Available, the lists below while it is.
    pub apiservices: Vec<Value>,
    pub node_metrics: Vec<Value>,
    pub pod_metrics: Vec<Value>,
    pub hpas: Vec<Value>,
    /// `batch/v1`.
    pub jobs: Vec<Value>,
    pub cronjobs: Vec<Value>,
    pub pdbs: Vec<Value>,
    pub quotas: Vec<Value>,
    pub pvs: Vec<Value>,
    pub leases: Vec<Value>,
    pub validating_webhooks: Vec<Value>,
    pub mutating_webhooks: Vec<Value>,
    pub services: Vec<Value>,
    pub endpointslices: Vec<Value>,
    /// Namespaces with labels (a Namespace's owner, `team`); those without any need none here.
    pub namespaces: Vec<Value>,
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            version: version("v1.33.4+k3s1"),
            nodes: vec![],
            pods: vec![],
            deployments: vec![],
            statefulsets: vec![],
            daemonsets: vec![],
            pvcs: vec![],
            events: vec![],
            apiservices: vec![],
            node_metrics: vec![],
            pod_metrics: vec![],
            hpas: vec![],
            jobs: vec![],
            cronjobs: vec![],
            pdbs: vec![],
            quotas: vec![],
            pvs: vec![],
            leases: vec![],
            validating_webhooks: vec![],
            mutating_webhooks: vec![],
            services: vec![],
            endpointslices: vec![],
            namespaces: vec![],
        }
    }
}

impl Cluster {
    /// Every collection with its objects, in the order of [`Resource::ALL`].
    pub fn lists(self) -> Vec<(Resource, Vec<Value>)> {
        vec![
            (Resource::Nodes, self.nodes),
            (Resource::Pods, self.pods),
            (Resource::Deployments, self.deployments),
            (Resource::StatefulSets, self.statefulsets),
            (Resource::DaemonSets, self.daemonsets),
            (Resource::PersistentVolumeClaims, self.pvcs),
            (Resource::Events, self.events),
            (Resource::ApiServices, self.apiservices),
            (Resource::NodeMetrics, self.node_metrics),
            (Resource::PodMetrics, self.pod_metrics),
            (Resource::HorizontalPodAutoscalers, self.hpas),
            (Resource::Jobs, self.jobs),
            (Resource::CronJobs, self.cronjobs),
            (Resource::PodDisruptionBudgets, self.pdbs),
            (Resource::ResourceQuotas, self.quotas),
            (Resource::PersistentVolumes, self.pvs),
            (Resource::Leases, self.leases),
            (Resource::ValidatingWebhookConfigurations, self.validating_webhooks),
            (Resource::MutatingWebhookConfigurations, self.mutating_webhooks),
            (Resource::Services, self.services),
            (Resource::EndpointSlices, self.endpointslices),
            (Resource::Namespaces, self.namespaces),
        ]
    }
}

/// RFC 3339 at whole seconds, as the API server writes `metav1.Time`.
pub fn time(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second()).expect("in range").to_string()
}

fn ago(now: Timestamp, minutes: i64) -> String {
    time(now - SignedDuration::from_mins(minutes))
}

/// A stable UID derived from a name, shaped like the API server's.
pub fn uid(seed: &str) -> String {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for b in seed.bytes() {
        h ^= b as u128;
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    let x = format!("{h:032x}");
    format!("{}-{}-{}-{}-{}", &x[0..8], &x[8..12], &x[12..16], &x[16..20], &x[20..32])
}

fn managed(manager: &str, api_version: &str, at: &str, fields: Value, subresource: Option<&str>) -> Value {
    let mut m = json!({
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": at,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    });
    if let Some(s) = subresource {
        m["subresource"] = json!(s);
    }
    m
}

/// The body of `GET /version`.
pub fn version(git_version: &str) -> Value {
    let minor = git_version.trim_start_matches('v').split('.').nth(1).unwrap_or("33").to_string();
    json!({
        "major": "1",
        "minor": minor,
        "emulationMajor": "1",
        "emulationMinor": minor,
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": git_version,
        "gitCommit": "9d8e3cc0e4e2a2ab1c4c2b1c2bdc6a6a1a0e1f4d",
        "gitTreeState": "clean",
        "buildDate": "2025-08-15T19:28:04Z",
        "goVersion": "go1.24.5",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

// ---------------------------------------------------------------------------------------------
// Nodes

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    /// `Some("True" | "False" | "Unknown")`, or `None` for a node that lists no Ready condition.
    pub ready: Option<String>,
    /// `(MemoryPressure | DiskPressure | PIDPressure | NetworkUnavailable, status)`.
    pub conditions: Vec<(String, String)>,
    pub unschedulable: bool,
    pub kubelet_version: String,
    pub control_plane: bool,
}

impl Node {
    pub fn new(name: &str) -> Node {
        Node {
            name: name.into(),
            ready: Some("True".into()),
            conditions: vec![
                ("MemoryPressure".into(), "False".into()),
                ("DiskPressure".into(), "False".into()),
                ("PIDPressure".into(), "False".into()),
            ],
            unschedulable: false,
            kubelet_version: "v1.33.4+k3s1".into(),
            control_plane: false,
        }
    }
    pub fn ready(mut self, status: Option<&str>) -> Node {
        self.ready = status.map(String::from);
        self
    }
    pub fn condition(mut self, kind: &str, status: &str) -> Node {
        self.conditions.retain(|(k, _)| k != kind);
        self.conditions.push((kind.into(), status.into()));
        self
    }
    pub fn cordoned(mut self) -> Node {
        self.unschedulable = true;
        self
    }
    pub fn kubelet(mut self, v: &str) -> Node {
        self.kubelet_version = v.into();
        self
    }
    pub fn control_plane(mut self) -> Node {
        self.control_plane = true;
        self
    }

    pub fn build(&self, now: Timestamp) -> Value {
        let created = ago(now, 60 * 24 * 40);
        let heartbeat = ago(now, 1);
        let mut conditions: Vec<Value> = self
            .conditions
            .iter()
            .map(|(kind, status)| {
                let (reason, message) = match (kind.as_str(), status.as_str()) {
                    ("MemoryPressure", "True") => ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
                    ("MemoryPressure", _) => ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    ("DiskPressure", "True") => ("KubeletHasDiskPressure", "kubelet has disk pressure"),
                    ("DiskPressure", _) => ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    ("PIDPressure", "True") => ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
                    ("PIDPressure", _) => ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    ("NetworkUnavailable", "True") => ("NoRouteCreated", "Node created without a route"),
                    _ => ("FlannelIsUp", "Flannel is running on this node"),
                };
                json!({"type": kind, "status": status, "lastHeartbeatTime": heartbeat, "lastTransitionTime": ago(now, 60 * 24), "reason": reason, "message": message})
            })
            .collect();
        if let Some(ready) = &self.ready {
            let (reason, message) = match ready.as_str() {
                "True" => ("KubeletReady", "kubelet is posting ready status"),
                "False" => (
                    "KubeletNotReady",
                    "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
                ),
                _ => ("NodeStatusUnknown", "Kubelet stopped posting node status."),
            };
            conditions.push(json!({"type": "Ready", "status": ready, "lastHeartbeatTime": heartbeat, "lastTransitionTime": ago(now, 30), "reason": reason, "message": message}));
        }
        let mut labels = json!({
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": "k3s",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": self.name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": "k3s"
        });
        if self.control_plane {
            labels["node-role.kubernetes.io/control-plane"] = json!("true");
            labels["node-role.kubernetes.io/master"] = json!("true");
        }
        let mut spec = json!({"podCIDR": "10.42.0.0/24", "podCIDRs": ["10.42.0.0/24"], "providerID": format!("k3s://{}", self.name)});
        if self.unschedulable {
            spec["unschedulable"] = json!(true);
            spec["taints"] =
                json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": ago(now, 20)}]);
        }
        let resources = json!({"cpu": "4", "ephemeral-storage": "61202244Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "8029404Ki", "pods": "110"});
        json!({
            "kind": "Node",
            "apiVersion": "v1",
            "metadata": {
                "name": self.name,
                "uid": uid(&self.name),
                "creationTimestamp": created,
                "labels": labels,
                "annotations": {
                    "alpha.kubernetes.io/provided-node-ip": "10.0.0.11",
                    "flannel.alpha.coreos.com/backend-type": "vxlan",
                    "k3s.io/hostname": self.name,
                    "k3s.io/internal-ip": "10.0.0.11",
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true"
                },
                "managedFields": [
                    managed("k3s", "v1", &created, json!({"f:metadata": {"f:annotations": {".": {}, "f:k3s.io/hostname": {}, "f:k3s.io/internal-ip": {}}, "f:labels": {"f:node.kubernetes.io/instance-type": {}}}}), None),
                    managed("kube-controller-manager", "v1", &created, json!({"f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}}, "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, "v:\"10.42.0.0/24\"": {}}}}), None),
                    managed("k3s", "v1", &heartbeat, json!({"f:status": {"f:allocatable": {"f:cpu": {}, "f:memory": {}}, "f:conditions": {"k:{\"type\":\"Ready\"}": {"f:lastHeartbeatTime": {}, "f:status": {}}}, "f:nodeInfo": {"f:bootID": {}}}}), Some("status"))
                ]
            },
            "spec": spec,
            "status": {
                "capacity": resources,
                "allocatable": resources,
                "conditions": conditions,
                "addresses": [{"type": "InternalIP", "address": "10.0.0.11"}, {"type": "Hostname", "address": self.name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "machineID": uid(&format!("machine-{}", self.name)).replace('-', ""),
                    "systemUUID": uid(&format!("system-{}", self.name)),
                    "bootID": uid(&format!("boot-{}", self.name)),
                    "kernelVersion": "6.1.0-28-amd64",
                    "osImage": "Debian GNU/Linux 12 (bookworm)",
                    "containerRuntimeVersion": "containerd://2.0.5-k3s2",
                    "kubeletVersion": self.kubelet_version,
                    "kubeProxyVersion": self.kubelet_version,
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                    "swap": {}
                },
                "images": [
                    {"names": ["docker.io/rancher/mirrored-pause@sha256:74c4244427b7312c5b901fe0f67cbc53683d06f4f24c6faee65d4182bf0fa893", "docker.io/rancher/mirrored-pause:3.6"], "sizeBytes": 301463}
                ]
            }
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Pods

/// What a container is doing now.
#[derive(Clone, Debug)]
pub enum State {
    Running,
    Waiting { reason: String, message: Option<String> },
    Terminated { reason: String, exit_code: i64 },
}

#[derive(Clone, Debug)]
pub struct Container {
    pub name: String,
    pub image: String,
    pub state: State,
    pub last_terminated: Option<(String, i64)>,
    pub restarts: i64,
    pub ready: bool,
}

impl Container {
    pub fn running(name: &str) -> Container {
        Container {
            name: name.into(),
            image: "registry.example.com/shop/app:1.4.2".into(),
            state: State::Running,
            last_terminated: None,
            restarts: 0,
            ready: true,
        }
    }
    pub fn waiting(name: &str, reason: &str, message: Option<&str>) -> Container {
        Container {
            state: State::Waiting { reason: reason.into(), message: message.map(String::from) },
            ready: false,
            ..Container::running(name)
        }
    }
    pub fn terminated(name: &str, reason: &str, exit_code: i64) -> Container {
        Container {
            state: State::Terminated { reason: reason.into(), exit_code },
            ready: false,
            ..Container::running(name)
        }
    }
    /// `CrashLoopBackOff` after a last exit of `reason`/`exit_code`.
    pub fn crashlooping(name: &str, reason: &str, exit_code: i64, restarts: i64) -> Container {
        let message = format!("back-off 5m0s restarting failed container={name} pod=_");
        Container::waiting(name, "CrashLoopBackOff", Some(&message))
            .last_terminated(reason, exit_code)
            .restarts(restarts)
    }
    pub fn image(mut self, image: &str) -> Container {
        self.image = image.into();
        self
    }
    pub fn restarts(mut self, n: i64) -> Container {
        self.restarts = n;
        self
    }
    pub fn last_terminated(mut self, reason: &str, exit_code: i64) -> Container {
        self.last_terminated = Some((reason.into(), exit_code));
        self
    }
    pub fn not_ready(mut self) -> Container {
        self.ready = false;
        self
    }

    fn spec(&self) -> Value {
        json!({
            "name": self.name,
            "image": self.image,
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access", "readOnly": true}]
        })
    }

    fn status(&self, pod: &str, now: Timestamp) -> Value {
        let container_id = format!("containerd://{}", uid(&format!("{pod}/{}", self.name)).replace('-', ""));
        let state = match &self.state {
            State::Running => json!({"running": {"startedAt": ago(now, 30)}}),
            State::Waiting { reason, message } => {
                let mut w = json!({"reason": reason});
                if let Some(m) = message {
                    w["message"] = json!(m.replace("pod=_", &format!("pod={pod}")));
                }
                json!({"waiting": w})
            }
            State::Terminated { reason, exit_code } => {
                json!({"terminated": {"exitCode": exit_code, "reason": reason, "startedAt": ago(now, 40), "finishedAt": ago(now, 35), "containerID": container_id}})
            }
        };
        let last = match &self.last_terminated {
            Some((reason, code)) => {
                json!({"terminated": {"exitCode": code, "reason": reason, "startedAt": ago(now, 3), "finishedAt": ago(now, 2), "containerID": container_id}})
            }
            None => json!({}),
        };
        let mut s = json!({
            "name": self.name,
            "state": state,
            "lastState": last,
            "ready": self.ready,
            "restartCount": self.restarts,
            "image": self.image,
            "imageID": format!("{}@sha256:{}", self.image.split(':').next().unwrap_or(""), uid(&self.image).replace('-', "").repeat(2)),
            "started": matches!(self.state, State::Running),
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access", "readOnly": true, "recursiveReadOnly": "Disabled"}]
        });
        if !matches!(self.state, State::Waiting { .. }) || self.last_terminated.is_some() {
            s["containerID"] = json!(container_id);
        }
        s
    }
}

#[derive(Clone, Debug)]
pub struct Pod {
    pub namespace: String,
    pub name: String,
    /// The controller: `(kind, name)`.
    pub owner: Option<(String, String)>,
    pub labels: Vec<(String, String)>,
    pub node: Option<String>,
    pub phase: String,
    pub containers: Vec<Container>,
    pub init_containers: Vec<Container>,
    pub claims: Vec<String>,
    /// The scheduler's message for a pod that cannot be placed.
    pub unschedulable: Option<String>,
    /// `status.reason` and `status.message` (an eviction).
    pub status_reason: Option<(String, String)>,
    /// Carry what production pods carry: environment, probes, more annotations.
    pub production: bool,
    custom_containers: bool,
}

impl Pod {
    /// A bare, Running, ready pod with one container `app`.
    pub fn new(namespace: &str, name: &str) -> Pod {
        Pod {
            namespace: namespace.into(),
            name: name.into(),
            owner: None,
            labels: vec![("app.kubernetes.io/name".into(), name.into())],
            node: Some("node-1".into()),
            phase: "Running".into(),
            containers: vec![Container::running("app")],
            init_containers: vec![],
            claims: vec![],
            unschedulable: None,
            status_reason: None,
            production: false,
            custom_containers: false,
        }
    }

    /// A pod of Deployment `deployment`: owned by ReplicaSet `deployment-hash`, named `deployment-hash-suffix`.
    pub fn of_deployment(namespace: &str, deployment: &str, hash: &str, suffix: &str) -> Pod {
        let mut p = Pod::new(namespace, &format!("{deployment}-{hash}-{suffix}"));
        p.owner = Some(("ReplicaSet".into(), format!("{deployment}-{hash}")));
        p.labels =
            vec![("app.kubernetes.io/name".into(), deployment.into()), ("pod-template-hash".into(), hash.into())];
        p
    }

    pub fn owned_by(mut self, kind: &str, name: &str) -> Pod {
        self.owner = Some((kind.into(), name.into()));
        self
    }
    pub fn on_node(mut self, node: &str) -> Pod {
        self.node = Some(node.into());
        self
    }
    pub fn phase(mut self, phase: &str) -> Pod {
        self.phase = phase.into();
        self
    }
    /// The first call replaces the default container.
    pub fn container(mut self, c: Container) -> Pod {
        if !self.custom_containers {
            self.containers.clear();
            self.custom_containers = true;
        }
        self.containers.push(c);
        self
    }
    pub fn init_container(mut self, c: Container) -> Pod {
        self.init_containers.push(c);
        self
    }
    pub fn claim(mut self, claim: &str) -> Pod {
        self.claims.push(claim.into());
        self
    }
    /// Pending, not placed on any node, with the scheduler's message.
    pub fn unschedulable(mut self, message: &str) -> Pod {
        self.phase = "Pending".into();
        self.node = None;
        self.unschedulable = Some(message.into());
        self.containers.iter_mut().for_each(|c| {
            c.ready = false;
            c.state = State::Waiting { reason: "ContainerCreating".into(), message: None };
        });
        self
    }

    /// With environment variables, probes and the annotations of a real deployment pipeline.
    pub fn production(mut self) -> Pod {
        self.production = true;
        self
    }

    /// Failed: evicted by the kubelet with `message`.
    pub fn evicted(mut self, message: &str) -> Pod {
        self.phase = "Failed".into();
        self.status_reason = Some(("Evicted".into(), message.into()));
        self.containers.iter_mut().for_each(|c| {
            c.ready = false;
            c.state = State::Terminated { reason: "ContainerStatusUnknown".into(), exit_code: 137 };
        });
        self
    }

    pub fn build(&self, now: Timestamp) -> Value {
        let created = ago(now, 45);
        let mut labels = serde_json::Map::new();
        for (k, v) in &self.labels {
            labels.insert(k.clone(), json!(v));
        }
        let mut metadata = json!({
            "name": self.name,
            "namespace": self.namespace,
            "uid": uid(&format!("{}/{}", self.namespace, self.name)),
            "creationTimestamp": created,
            "labels": labels,
            "managedFields": [
                managed("kube-controller-manager", "v1", &created, json!({"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app.kubernetes.io/name": {}}, "f:ownerReferences": {".": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {}}}, "f:dnsPolicy": {}, "f:restartPolicy": {}}}), None),
                managed("k3s", "v1", &ago(now, 1), json!({"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:startTime": {}}}), Some("status"))
            ]
        });
        if let Some((kind, name)) = &self.owner {
            let api_version = match kind.as_str() {
                "ReplicaSet" | "StatefulSet" | "DaemonSet" => "apps/v1",
                "Job" => "batch/v1",
                _ => "v1",
            };
            metadata["ownerReferences"] = json!([{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid(name), "controller": true, "blockOwnerDeletion": true}]);
            metadata["generateName"] = json!(format!("{name}-"));
        }
        let mut volumes: Vec<Value> = self
            .claims
            .iter()
            .map(|c| json!({"name": format!("data-{c}"), "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        volumes.push(json!({"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]}}));
        let mut spec = json!({
            "volumes": volumes,
            "containers": self.containers.iter().map(Container::spec).collect::<Vec<_>>(),
            "restartPolicy": if self.owner.as_ref().is_some_and(|(k, _)| k == "Job") { "Never" } else { "Always" },
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0,
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority"
        });
        if !self.init_containers.is_empty() {
            spec["initContainers"] = json!(self.init_containers.iter().map(Container::spec).collect::<Vec<_>>());
        }
        if self.production {
            metadata["annotations"] = json!({
                "kubectl.kubernetes.io/restartedAt": ago(now, 60 * 24),
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9102",
                "checksum/config": "3f1c0c8e9d1b2a4f5e6d7c8b9a0f1e2d3c4b5a6978877665544332211ffeeddc",
                "deployment.example.com/commit": "9d8e3cc0e4e2a2ab1c4c2b1c2bdc6a6a1a0e1f4d",
            });
            if let Some(containers) = spec["containers"].as_array_mut() {
                for c in containers {
                    c["env"] = json!((0..8).map(|i| json!({"name": format!("APP_SETTING_{i}"), "value": format!("value-{i}-{}", self.namespace)})).collect::<Vec<_>>());
                    c["livenessProbe"] = json!({"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3});
                    c["readinessProbe"] = json!({"httpGet": {"path": "/readyz", "port": "http", "scheme": "HTTP"}, "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3});
                }
            }
        }
        if let Some(n) = &self.node {
            spec["nodeName"] = json!(n);
        }

        let all_ready = self.containers.iter().all(|c| c.ready);
        let init_done = self.init_containers.iter().all(|c| matches!(c.state, State::Terminated { exit_code: 0, .. }));
        let cond = |kind: &str, ok: bool, reason: Option<&str>| {
            let mut c = json!({"type": kind, "status": if ok { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": ago(now, 40)});
            if let Some(r) = reason {
                c["reason"] = json!(r);
            }
            c
        };
        let mut status = json!({"phase": self.phase, "qosClass": "Burstable"});
        if let Some((reason, message)) = &self.status_reason {
            status["reason"] = json!(reason);
            status["message"] = json!(message);
        }
        if let Some(message) = &self.unschedulable {
            let mut c = cond("PodScheduled", false, Some("Unschedulable"));
            c["message"] = json!(message);
            status["conditions"] = json!([c]);
        } else {
            let running = self.phase == "Running";
            let ready = running && all_ready;
            let not_ready_reason =
                (!ready).then_some(if self.phase == "Succeeded" { "PodCompleted" } else { "ContainersNotReady" });
            status["conditions"] = json!([
                cond("PodReadyToStartContainers", self.phase != "Pending" || init_done, None),
                cond("Initialized", init_done, (!init_done).then_some("ContainersNotInitialized")),
                cond("Ready", ready, not_ready_reason),
                cond("ContainersReady", ready, not_ready_reason),
                cond("PodScheduled", true, None)
            ]);
            status["hostIP"] = json!("10.0.0.11");
            status["hostIPs"] = json!([{"ip": "10.0.0.11"}]);
            status["podIP"] = json!("10.42.0.17");
            status["podIPs"] = json!([{"ip": "10.42.0.17"}]);
            status["startTime"] = json!(created);
            status["containerStatuses"] =
                json!(self.containers.iter().map(|c| c.status(&self.name, now)).collect::<Vec<_>>());
            if !self.init_containers.is_empty() {
                status["initContainerStatuses"] =
                    json!(self.init_containers.iter().map(|c| c.status(&self.name, now)).collect::<Vec<_>>());
            }
        }
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec, "status": status})
    }
}

// ---------------------------------------------------------------------------------------------
// Workloads and claims

fn workload_metadata(namespace: &str, name: &str, kind: &str, now: Timestamp) -> Value {
    let created = ago(now, 60 * 24 * 3);
    json!({
        "name": name,
        "namespace": namespace,
        "uid": uid(&format!("{kind}/{namespace}/{name}")),
        "generation": 4,
        "creationTimestamp": created,
        "labels": {"app.kubernetes.io/name": name},
        "annotations": {"deployment.kubernetes.io/revision": "4"},
        "managedFields": [
            managed("kubectl-client-side-apply", "apps/v1", &created, json!({"f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/name": {}}}, "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {}}, "f:spec": {"f:containers": {}}}}}), None),
            managed("kube-controller-manager", "apps/v1", &ago(now, 2), json!({"f:status": {"f:availableReplicas": {}, "f:conditions": {}, "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}}}), Some("status"))
        ]
    })
}

fn pod_template(name: &str) -> Value {
    json!({
        "metadata": {"labels": {"app.kubernetes.io/name": name}},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/shop/app:1.4.2", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName": "default-scheduler"}
    })
}

/// A Job's pod template: the API server refuses one that restarts Always.
fn job_template(name: &str) -> Value {
    let mut t = pod_template(name);
    t["spec"]["restartPolicy"] = json!("Never");
    t
}

/// A Deployment; `replicas: None` leaves `spec.replicas` out (the API default is 1).
pub fn deployment(
    namespace: &str,
    name: &str,
    replicas: Option<i64>,
    ready: i64,
    available: i64,
    now: Timestamp,
) -> Value {
    let mut spec = json!({"selector": {"matchLabels": {"app.kubernetes.io/name": name}}, "template": pod_template(name), "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600});
    if let Some(r) = replicas {
        spec["replicas"] = json!(r);
    }
    let desired = replicas.unwrap_or(1);
    let mut status = json!({"observedGeneration": 4, "replicas": desired, "updatedReplicas": desired});
    if ready > 0 {
        status["readyReplicas"] = json!(ready);
    }
    if available > 0 {
        status["availableReplicas"] = json!(available);
    }
    if available < desired {
        status["unavailableReplicas"] = json!(desired - available);
    }
    let available_cond = if available >= desired {
        ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    } else {
        ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
    };
    status["conditions"] = json!([
        {"type": "Available", "status": available_cond.0, "lastUpdateTime": ago(now, 20), "lastTransitionTime": ago(now, 20), "reason": available_cond.1, "message": available_cond.2},
        {"type": "Progressing", "status": "True", "lastUpdateTime": ago(now, 60), "lastTransitionTime": ago(now, 60 * 24), "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{name}-7c9696d669\" has successfully progressed.")}
    ]);
    json!({"kind": "Deployment", "apiVersion": "apps/v1", "metadata": workload_metadata(namespace, name, "Deployment", now), "spec": spec, "status": status})
}

pub fn statefulset(
    namespace: &str,
    name: &str,
    replicas: Option<i64>,
    ready: i64,
    available: i64,
    now: Timestamp,
) -> Value {
    let mut spec = json!({"selector": {"matchLabels": {"app.kubernetes.io/name": name}}, "serviceName": name, "template": pod_template(name), "podManagementPolicy": "OrderedReady", "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, "revisionHistoryLimit": 10, "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}});
    if let Some(r) = replicas {
        spec["replicas"] = json!(r);
    }
    let desired = replicas.unwrap_or(1);
    let mut status = json!({"observedGeneration": 4, "replicas": desired, "currentReplicas": desired, "updatedReplicas": desired, "currentRevision": format!("{name}-5b6d8f9c7d"), "updateRevision": format!("{name}-5b6d8f9c7d"), "collisionCount": 0});
    if ready > 0 {
        status["readyReplicas"] = json!(ready);
    }
    status["availableReplicas"] = json!(available);
    json!({"kind": "StatefulSet", "apiVersion": "apps/v1", "metadata": workload_metadata(namespace, name, "StatefulSet", now), "spec": spec, "status": status})
}

pub fn daemonset(namespace: &str, name: &str, desired: i64, ready: i64, available: i64, now: Timestamp) -> Value {
    let mut status = json!({"currentNumberScheduled": desired, "desiredNumberScheduled": desired, "numberMisscheduled": 0, "numberReady": ready, "observedGeneration": 4, "updatedNumberScheduled": desired});
    if available > 0 {
        status["numberAvailable"] = json!(available);
    }
    if available < desired {
        status["numberUnavailable"] = json!(desired - available);
    }
    json!({
        "kind": "DaemonSet",
        "apiVersion": "apps/v1",
        "metadata": workload_metadata(namespace, name, "DaemonSet", now),
        "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": name}}, "template": pod_template(name), "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}, "revisionHistoryLimit": 10},
        "status": status
    })
}

/// A claim in `phase` (`Bound`, `Pending`, `Lost`). `wait_for_first_consumer` marks a claim
/// whose class binds only once a pod uses it (k3s local-path).
pub fn pvc(
    namespace: &str,
    name: &str,
    phase: &str,
    storage_class: &str,
    wait_for_first_consumer: bool,
    now: Timestamp,
) -> Value {
    let created = ago(now, 90);
    let mut annotations = json!({});
    if wait_for_first_consumer {
        annotations["volume.kubernetes.io/selected-node"] = Value::Null;
    }
    annotations["volume.beta.kubernetes.io/storage-provisioner"] = json!("rancher.io/local-path");
    annotations["volume.kubernetes.io/storage-provisioner"] = json!("rancher.io/local-path");
    if let Some(map) = annotations.as_object_mut() {
        map.retain(|_, v| !v.is_null());
    }
    let mut spec = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}, "storageClassName": storage_class, "volumeMode": "Filesystem"});
    let mut status = json!({"phase": phase});
    if phase == "Bound" {
        let volume = format!("pvc-{}", uid(&format!("{namespace}/{name}")));
        spec["volumeName"] = json!(volume);
        annotations["pv.kubernetes.io/bind-completed"] = json!("yes");
        annotations["pv.kubernetes.io/bound-by-controller"] = json!("yes");
        status = json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}});
    }
    json!({
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid(&format!("pvc/{namespace}/{name}")),
            "creationTimestamp": created,
            "annotations": annotations,
            "finalizers": ["kubernetes.io/pvc-protection"],
            "managedFields": [
                managed("kubectl-client-side-apply", "v1", &created, json!({"f:spec": {"f:accessModes": {}, "f:resources": {"f:requests": {".": {}, "f:storage": {}}}, "f:storageClassName": {}, "f:volumeMode": {}}}), None)
            ]
        },
        "spec": spec,
        "status": status
    })
}

// ---------------------------------------------------------------------------------------------
// Events

/// Which of an event's time fields carry its last occurrence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventTime {
    /// core/v1 events from a classic recorder: `firstTimestamp`/`lastTimestamp`, `count`.
    LastTimestamp,
    /// events.k8s.io recorder with a series: `eventTime` (first) and `series.lastObservedTime`.
    Series,
    /// events.k8s.io recorder, single occurrence: `eventTime` only.
    EventTime,
    /// No time field at all but `metadata.creationTimestamp`.
    CreationOnly,
}

#[derive(Clone, Debug)]
pub struct Event {
    pub namespace: String,
    pub kind: String,
    pub object_namespace: Option<String>,
    pub object_name: String,
    pub reason: String,
    pub message: String,
    pub event_type: String,
    pub minutes_ago: i64,
    pub count: i64,
    pub time: EventTime,
    /// Distinguishes events about the same object with the same reason.
    pub seq: u32,
}

impl Event {
    /// A Warning about `kind` `namespace/name`, recorded in the object's namespace.
    pub fn warning(kind: &str, namespace: &str, name: &str, reason: &str, message: &str) -> Event {
        Event {
            namespace: if namespace.is_empty() { "default".into() } else { namespace.into() },
            kind: kind.into(),
            object_namespace: (!namespace.is_empty()).then(|| namespace.into()),
            object_name: name.into(),
            reason: reason.into(),
            message: message.into(),
            event_type: "Warning".into(),
            minutes_ago: 2,
            count: 1,
            time: EventTime::LastTimestamp,
            seq: 0,
        }
    }
    /// Where the event object itself lives (node events are often recorded in `default`).
    pub fn recorded_in(mut self, namespace: &str) -> Event {
        self.namespace = namespace.into();
        self
    }
    pub fn normal(mut self) -> Event {
        self.event_type = "Normal".into();
        self
    }
    pub fn minutes_ago(mut self, m: i64) -> Event {
        self.minutes_ago = m;
        self
    }
    pub fn count(mut self, n: i64) -> Event {
        self.count = n;
        self
    }
    pub fn time(mut self, t: EventTime) -> Event {
        self.time = t;
        self
    }
    pub fn seq(mut self, s: u32) -> Event {
        self.seq = s;
        self
    }

    pub fn build(&self, now: Timestamp) -> Value {
        let last = ago(now, self.minutes_ago);
        let first = ago(now, self.minutes_ago + 10 * (self.count - 1).min(5));
        let micro = |m: &str| format!("{}.{:06}Z", m.trim_end_matches('Z'), 123456 + self.seq);
        let name = format!(
            "{}.{}",
            self.object_name,
            &uid(&format!("{}/{}/{}/{}", self.object_name, self.reason, self.seq, self.namespace)).replace('-', "")
                [..16]
        );
        let (component, host) = match self.reason.as_str() {
            "FailedScheduling" => ("default-scheduler", None),
            "ProvisioningFailed" => ("persistentvolume-controller", None),
            _ => ("kubelet", Some("node-1")),
        };
        let mut involved = json!({"kind": self.kind, "name": self.object_name, "uid": uid(&self.object_name), "apiVersion": if self.kind == "Deployment" { "apps/v1" } else { "v1" }, "resourceVersion": "4711"});
        if let Some(ns) = &self.object_namespace {
            involved["namespace"] = json!(ns);
        }
        if self.kind == "Pod" {
            involved["fieldPath"] = json!("spec.containers{app}");
        }
        let mut source = json!({"component": component});
        if let Some(h) = host {
            source["host"] = json!(h);
        }
        let mut e = json!({
            "kind": "Event",
            "apiVersion": "v1",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "uid": uid(&name),
                "creationTimestamp": first,
                "managedFields": [managed(component, "v1", &last, json!({"f:count": {}, "f:firstTimestamp": {}, "f:involvedObject": {}, "f:lastTimestamp": {}, "f:message": {}, "f:reason": {}, "f:source": {"f:component": {}}, "f:type": {}}), None)]
            },
            "involvedObject": involved,
            "reason": self.reason,
            "message": self.message,
            "source": source,
            "type": self.event_type,
            "reportingComponent": component,
            "reportingInstance": host.unwrap_or(""),
        });
        match self.time {
            EventTime::LastTimestamp => {
                e["firstTimestamp"] = json!(first);
                e["lastTimestamp"] = json!(last);
                e["count"] = json!(self.count);
                e["eventTime"] = Value::Null;
            }
            EventTime::Series => {
                e["firstTimestamp"] = Value::Null;
                e["lastTimestamp"] = Value::Null;
                e["eventTime"] = json!(micro(&first));
                e["series"] = json!({"count": self.count, "lastObservedTime": micro(&last)});
                e["action"] = json!("Scheduling");
            }
            EventTime::EventTime => {
                e["firstTimestamp"] = Value::Null;
                e["lastTimestamp"] = Value::Null;
                e["eventTime"] = json!(micro(&last));
                e["action"] = json!("Scheduling");
            }
            EventTime::CreationOnly => {
                e["firstTimestamp"] = Value::Null;
                e["lastTimestamp"] = Value::Null;
                e["eventTime"] = Value::Null;
                e["metadata"]["creationTimestamp"] = json!(last);
            }
        }
        if matches!(self.time, EventTime::Series | EventTime::EventTime) {
            // Written through events.k8s.io, as kube-scheduler writes them: no source, and the
            // reporting instance the API server requires of such events (the component and
            // its host's name).
            e["source"] = json!({});
            if host.is_none() {
                e["reportingInstance"] = json!(format!("{component}-control-plane"));
            }
        }
        e
    }
}

// ---------------------------------------------------------------------------------------------
// The aggregation layer, metrics-server and autoscaling

/// A local APIService (`v1.apps`), always Available.
pub fn apiservice_local(group: &str, version: &str, now: Timestamp) -> Value {
    let name = if group.is_empty() { version.to_string() } else { format!("{version}.{group}") };
    json!({
        "metadata": {"name": name, "uid": uid(&format!("apiservice/{name}")), "creationTimestamp": ago(now, 60 * 24 * 30), "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}},
        "spec": {"group": group, "version": version, "groupPriorityMinimum": 17800, "versionPriority": 15},
        "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": ago(now, 60 * 24 * 30), "reason": "Local", "message": "Local APIServices are always available"}]}
    })
}

/// An aggregated APIService served by `namespace/service`. When not available, its condition
/// is the one kube-aggregator writes when the discovery check cannot reach the service.
pub fn apiservice_aggregated(
    group: &str,
    version: &str,
    namespace: &str,
    service: &str,
    available: bool,
    now: Timestamp,
) -> Value {
    let (status, reason, message) = if available {
        ("True", "Passed", "all checks passed".to_string())
    } else {
        let url = format!("https://10.96.0.12:4443/apis/{group}/{version}");
        (
            "False",
            "FailedDiscoveryCheck",
            format!("failing or missing response from {url}: Get \"{url}\": context deadline exceeded"),
        )
    };
    apiservice_with(group, version, namespace, service, status, reason, &message, now)
}

/// Why kube-aggregator's availability controller finds an APIService's Service unusable, in its
/// own words: the Service is missing, or none of its endpoints has the port.
pub fn apiservice_unreachable(
    group: &str,
    version: &str,
    namespace: &str,
    service: &str,
    service_exists: bool,
    now: Timestamp,
) -> Value {
    let (reason, message) = if service_exists {
        (
            "MissingEndpoints",
            format!(
                "endpointslices for service/{service} in \"{namespace}\" have no addresses with port name \"https\""
            ),
        )
    } else {
        ("ServiceNotFound", format!("service/{service} in \"{namespace}\" is not present"))
    };
    apiservice_with(group, version, namespace, service, "False", reason, &message, now)
}

#[allow(clippy::too_many_arguments)]
fn apiservice_with(
    group: &str,
    version: &str,
    namespace: &str,
    service: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> Value {
    let name = format!("{version}.{group}");
    let condition = json!({"type": "Available", "status": status, "lastTransitionTime": ago(now, 60 * 24), "reason": reason, "message": message});
    json!({
        "metadata": {"name": name, "uid": uid(&format!("apiservice/{name}")), "creationTimestamp": ago(now, 60 * 24 * 30),
                     "labels": {"k8s-app": service}},
        "spec": {"service": {"namespace": namespace, "name": service, "port": 443}, "group": group, "version": version,
                 "insecureSkipTLSVerify": true, "groupPriorityMinimum": 100, "versionPriority": 100},
        "status": {"conditions": [condition]}
    })
}

/// A node's usage as metrics-server reports it (`cpu` in nanocores, `memory` in Ki).
pub fn node_metrics(name: &str, cpu: &str, memory: &str, now: Timestamp) -> Value {
    json!({
        "metadata": {"name": name, "creationTimestamp": time(now), "labels": {"kubernetes.io/hostname": name}},
        "timestamp": time(now - SignedDuration::from_secs(10)),
        "window": "10.062s",
        "usage": {"cpu": cpu, "memory": memory}
    })
}

/// A pod's usage, per container.
pub fn pod_metrics(namespace: &str, name: &str, containers: &[(&str, &str, &str)], now: Timestamp) -> Value {
    json!({
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": time(now)},
        "timestamp": time(now - SignedDuration::from_secs(12)),
        "window": "15.007s",
        "containers": containers.iter().map(|(c, cpu, memory)| json!({"name": c, "usage": {"cpu": cpu, "memory": memory}})).collect::<Vec<_>>()
    })
}

/// An `autoscaling/v2` HPA on a Deployment. `failing`: the ScalingActive condition is False with
/// this (reason, message); otherwise it is True.
#[allow(clippy::too_many_arguments)]
pub fn hpa(
    namespace: &str,
    name: &str,
    target: &str,
    min: i64,
    max: i64,
    current: i64,
    failing: Option<(&str, &str)>,
    now: Timestamp,
) -> Value {
    let active = match failing {
        Some((reason, message)) => {
            json!({"type": "ScalingActive", "status": "False", "lastTransitionTime": ago(now, 30), "reason": reason, "message": message})
        }
        None => {
            json!({"type": "ScalingActive", "status": "True", "lastTransitionTime": ago(now, 60), "reason": "ValidMetricFound", "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"})
        }
    };
    let limited = if current >= max {
        json!({"type": "ScalingLimited", "status": "True", "lastTransitionTime": ago(now, 20), "reason": "TooManyReplicas", "message": "the desired replica count is more than the maximum replica count"})
    } else {
        json!({"type": "ScalingLimited", "status": "False", "lastTransitionTime": ago(now, 60), "reason": "DesiredWithinRange", "message": "the desired count is within the acceptable range"})
    };
    json!({
        "metadata": {"name": name, "namespace": namespace, "uid": uid(&format!("hpa/{namespace}/{name}")), "creationTimestamp": ago(now, 60 * 24 * 3)},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}, "minReplicas": min, "maxReplicas": max,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]},
        "status": {"currentReplicas": current, "desiredReplicas": current,
                   "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": ago(now, 60), "reason": "SucceededGetScale", "message": "the HPA controller was able to get the target's current scale"}, active, limited]}
    })
}

// Disruption budgets, quotas, volumes and leases

/// A PodDisruptionBudget on the pods labelled `app: APP`, with its status as the disruption
/// controller writes it.
pub fn pdb(namespace: &str, name: &str, min_available: i64, expected: i64, healthy: i64, now: Timestamp) -> Value {
    json!({
        "metadata": {"name": name, "namespace": namespace, "uid": uid(&format!("pdb/{namespace}/{name}")), "generation": 1, "creationTimestamp": ago(now, 60 * 24)},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": name}}},
        "status": {"observedGeneration": 1, "disruptionsAllowed": (healthy - min_available).max(0), "currentHealthy": healthy,
                   "desiredHealthy": min_available, "expectedPods": expected}
    })
}

/// A ResourceQuota with its hard limits and what the quota controller counted: `(resource,
/// hard, used)`, quantities as written.
pub fn quota(namespace: &str, name: &str, resources: &[(&str, &str, &str)], now: Timestamp) -> Value {
    let hard: serde_json::Map<String, Value> = resources.iter().map(|(r, h, _)| (r.to_string(), json!(h))).collect();
    let used: serde_json::Map<String, Value> = resources.iter().map(|(r, _, u)| (r.to_string(), json!(u))).collect();
    json!({
        "metadata": {"name": name, "namespace": namespace, "uid": uid(&format!("quota/{namespace}/{name}")), "creationTimestamp": ago(now, 60 * 24)},
        "spec": {"hard": hard},
        "status": {"hard": hard, "used": used}
    })
}

/// A host-path PersistentVolume in `phase`, bound to `claim` (`namespace/name`) when given.
pub fn pv(name: &str, phase: &str, claim: Option<&str>, message: Option<&str>, now: Timestamp) -> Value {
    let mut spec = json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": format!("/srv/{name}")},
                          "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"});
    if let Some((namespace, claim)) = claim.and_then(|c| c.split_once('/')) {
        spec["claimRef"] =
            json!({"kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim, "apiVersion": "v1"});
    }
    let mut status = json!({"phase": phase, "lastPhaseTransitionTime": ago(now, 30)});
    if let Some(m) = message {
        status["message"] = json!(m);
    }
    json!({
        "metadata": {"name": name, "uid": uid(&format!("pv/{name}")), "creationTimestamp": ago(now, 60 * 24)},
        "spec": spec,
        "status": status
    })
}

/// A leader lease in kube-system, renewed `renewed_ago` before `now` by `holder`.
pub fn lease(name: &str, holder: &str, renewed_ago: SignedDuration, now: Timestamp) -> Value {
    let renewed = now - renewed_ago;
    // A MicroTime: microseconds, as the leader-election client writes it.
    let micro = Timestamp::from_microsecond(renewed.as_microsecond()).expect("in range");
    json!({
        "metadata": {"name": name, "namespace": "kube-system", "uid": uid(&format!("lease/{name}")), "creationTimestamp": ago(now, 60 * 24 * 7)},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "acquireTime": format!("{}", micro.strftime("%Y-%m-%dT%H:%M:%S%.6fZ")),
                 "renewTime": format!("{}", micro.strftime("%Y-%m-%dT%H:%M:%S%.6fZ")), "leaseTransitions": 2}
    })
}

// Admission webhooks and their Services

/// A webhook configuration (`kind`: `ValidatingWebhookConfiguration` or
/// `MutatingWebhookConfiguration`) with one webhook, called through `service`
/// (`namespace/name`) on port 443 and intercepting CREATE and UPDATE of pods, as the API server
/// returns it (its defaults filled in).
pub fn webhook_configuration(kind: &str, name: &str, service: &str, failure_policy: &str, now: Timestamp) -> Value {
    let (namespace, service) = service.split_once('/').expect("namespace/name");
    let mut hook = json!({
        "name": format!("{name}.example.com"),
        "clientConfig": {"service": {"namespace": namespace, "name": service, "path": "/validate", "port": 443}},
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "*"}],
        "failurePolicy": failure_policy, "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
        "sideEffects": "None", "timeoutSeconds": 10, "admissionReviewVersions": ["v1"]
    });
    if kind == "MutatingWebhookConfiguration" {
        hook["reinvocationPolicy"] = json!("Never");
    }
    json!({
        "metadata": {"name": name, "uid": uid(&format!("webhook/{kind}/{name}")), "generation": 1, "creationTimestamp": ago(now, 60)},
        "webhooks": [hook]
    })
}

/// A ClusterIP Service without a selector, its port 443 named `https` to 8443.
pub fn service(namespace: &str, name: &str, now: Timestamp) -> Value {
    json!({
        "metadata": {"name": name, "namespace": namespace, "uid": uid(&format!("service/{namespace}/{name}")), "creationTimestamp": ago(now, 60)},
        "spec": {"type": "ClusterIP", "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": 8443}],
                 "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"},
        "status": {"loadBalancer": {}}
    })
}

/// An EndpointSlice of `service` with one endpoint on its `https` port, ready or not.
pub fn endpointslice(namespace: &str, service: &str, ready: bool, now: Timestamp) -> Value {
    json!({
        "metadata": {"name": format!("{service}-1"), "namespace": namespace, "uid": uid(&format!("slice/{namespace}/{service}")),
                     "creationTimestamp": ago(now, 60), "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.42.0.50"], "conditions": {"ready": ready}}],
        "ports": [{"name": "https", "protocol": "TCP", "port": 8443}]
    })
}

// Jobs and CronJobs (`batch/v1`)

/// A Job; `owner` is the CronJob that created it. `outcome`: `Some(true)` Complete,
/// `Some(false)` Failed (its back-off limit reached), None still running.
pub fn job(namespace: &str, name: &str, owner: Option<&str>, outcome: Option<bool>, created: Timestamp) -> Value {
    let created_at = time(created);
    let mut metadata = json!({
        "name": name,
        "namespace": namespace,
        "uid": uid(&format!("Job/{namespace}/{name}")),
        "creationTimestamp": created_at,
        "labels": {"batch.kubernetes.io/job-name": name, "job-name": name},
    });
    if let Some(cronjob) = owner {
        metadata["ownerReferences"] = json!([{"apiVersion": "batch/v1", "kind": "CronJob", "name": cronjob, "uid": uid(cronjob), "controller": true, "blockOwnerDeletion": true}]);
        metadata["annotations"] = json!({"batch.kubernetes.io/cronjob-scheduled-timestamp": created_at});
    }
    let ended = time(created + SignedDuration::from_mins(2));
    let status = match outcome {
        Some(true) => {
            json!({"startTime": created_at, "completionTime": ended, "succeeded": 1, "failed": 1, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {}, "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": ended, "lastTransitionTime": ended, "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"},
                {"type": "Complete", "status": "True", "lastProbeTime": ended, "lastTransitionTime": ended, "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}
            ]})
        }
        Some(false) => {
            json!({"startTime": created_at, "failed": 7, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {}, "conditions": [
                {"type": "FailureTarget", "status": "True", "lastProbeTime": ended, "lastTransitionTime": ended, "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
                {"type": "Failed", "status": "True", "lastProbeTime": ended, "lastTransitionTime": ended, "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}
            ]})
        }
        None => {
            json!({"startTime": created_at, "active": 1, "ready": 1, "terminating": 0, "uncountedTerminatedPods": {}})
        }
    };
    json!({
        "kind": "Job",
        "apiVersion": "batch/v1",
        "metadata": metadata,
        "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": false, "podReplacementPolicy": "TerminatingOrFailed", "template": job_template(name)},
        "status": status
    })
}

/// A CronJob on `schedule`, last scheduled at `last` (None: never yet).
pub fn cronjob(namespace: &str, name: &str, schedule: &str, last: Option<Timestamp>, now: Timestamp) -> Value {
    let mut status = json!({});
    if let Some(t) = last {
        status["lastScheduleTime"] = json!(time(t));
        status["lastSuccessfulTime"] = json!(time(t + SignedDuration::from_mins(2)));
    }
    json!({
        "kind": "CronJob",
        "apiVersion": "batch/v1",
        "metadata": {"name": name, "namespace": namespace, "uid": uid(&format!("CronJob/{namespace}/{name}")), "generation": 1, "creationTimestamp": ago(now, 60 * 24 * 30)},
        "spec": {"schedule": schedule, "concurrencyPolicy": "Forbid", "suspend": false, "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                 "jobTemplate": {"metadata": {}, "spec": {"backoffLimit": 6, "template": job_template(name)}}},
        "status": status
    })
}

/// Marks a built pod as deleted: its grace period (`grace` seconds) ended `past_end` ago (a
/// negative value: it has that long still), held by `finalizers`.
pub fn deleting(mut pod: Value, grace: i64, past_end: SignedDuration, finalizers: &[&str], now: Timestamp) -> Value {
    pod["metadata"]["deletionTimestamp"] = json!(time(now - past_end));
    pod["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
    if !finalizers.is_empty() {
        pod["metadata"]["finalizers"] = json!(finalizers);
    }
    pod
}

/// A Namespace with these labels.
pub fn namespace(name: &str, labels: &[(&str, &str)], now: Timestamp) -> Value {
    let labels: serde_json::Map<String, Value> =
        labels.iter().map(|(k, v)| (k.to_string(), Value::String(v.to_string()))).collect();
    json!({
        "metadata": {
            "name": name,
            "uid": uid(&format!("namespace/{name}")),
            "resourceVersion": "1",
            "creationTimestamp": time(now),
            "labels": labels,
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}
