//! Kubernetes resource quantities (`100m`, `1.5`, `128Mi`, `1e3`, `2G`) and what a pod asks of
//! its node: its requests and limits as the scheduler counts them.

use serde::Deserialize;

/// The value of a quantity in its base unit (cores, bytes), or None if it is not one.
pub fn parse(q: &str) -> Option<f64> {
    let q = q.trim();
    let split = q.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let (number, suffix) = match suffix.as_bytes().first() {
        // A decimal exponent: `1e3`, `1E-3` (but `1E` is exa and `1Ei` exbi).
        Some(b'e' | b'E') if suffix.len() > 1 && suffix != "Ei" => (q, ""),
        _ => (number, suffix),
    };
    let value: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    let v = value * scale;
    v.is_finite().then_some(v)
}

/// CPU in millicores, rounded up as Kubernetes does (`MilliValue`).
pub fn millicores(q: &str) -> Option<i64> {
    parse(q).map(|v| (v * 1000.0 - 1e-9).ceil() as i64)
}

/// Memory in bytes, rounded up.
pub fn bytes(q: &str) -> Option<i64> {
    parse(q).map(|v| (v - 1e-9).ceil() as i64)
}

/// CPU (millicores) and memory (bytes) requested and limited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Resources {
    pub cpu_requests: i64,
    pub cpu_limits: i64,
    pub memory_requests: i64,
    pub memory_limits: i64,
}

impl Resources {
    /// Each figure summed, held at the largest figure rather than overflowing: a quantity
    /// comes from the cluster, and a huge one ("9e18") must not wrap a sum or panic.
    fn plus(self, o: Resources) -> Resources {
        Resources {
            cpu_requests: self.cpu_requests.saturating_add(o.cpu_requests),
            cpu_limits: self.cpu_limits.saturating_add(o.cpu_limits),
            memory_requests: self.memory_requests.saturating_add(o.memory_requests),
            memory_limits: self.memory_limits.saturating_add(o.memory_limits),
        }
    }

    /// Each figure the larger of the two.
    fn max(self, o: Resources) -> Resources {
        Resources {
            cpu_requests: self.cpu_requests.max(o.cpu_requests),
            cpu_limits: self.cpu_limits.max(o.cpu_limits),
            memory_requests: self.memory_requests.max(o.memory_requests),
            memory_limits: self.memory_limits.max(o.memory_limits),
        }
    }

    pub fn add(&mut self, o: Resources) {
        *self = self.plus(o);
    }
}

/// `resources` of a container, as read.
#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct ContainerResources {
    #[serde(deserialize_with = "super::nullable")]
    requests: Quantities,
    #[serde(deserialize_with = "super::nullable")]
    limits: Quantities,
}

/// The quantities that matter here (a node's allocatable `pods` too); other resources (GPUs,
/// storage) are skipped.
#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Quantities {
    cpu: Option<String>,
    memory: Option<String>,
    pods: Option<String>,
}

impl Quantities {
    /// From a protobuf map of quantities (resource name to its text).
    pub(crate) fn from_protobuf(map: std::collections::HashMap<String, crate::kube::proto::Quantity>) -> Quantities {
        let mut map = map;
        let mut take = |name: &str| map.remove(name).map(|q| q.string);
        Quantities { cpu: take("cpu"), memory: take("memory"), pods: take("pods") }
    }

    /// A count (a node's allocatable pods).
    pub fn pods(&self) -> Option<i64> {
        self.pods.as_deref().and_then(parse).map(|v| v as i64)
    }

    pub fn cpu_millicores(&self) -> Option<i64> {
        self.cpu.as_deref().and_then(millicores)
    }

    pub fn memory_bytes(&self) -> Option<i64> {
        self.memory.as_deref().and_then(bytes)
    }

    fn cpu(&self) -> i64 {
        self.cpu.as_deref().and_then(millicores).unwrap_or(0)
    }

    fn memory(&self) -> i64 {
        self.memory.as_deref().and_then(bytes).unwrap_or(0)
    }
}

impl ContainerResources {
    pub(crate) fn new(requests: Quantities, limits: Quantities) -> ContainerResources {
        ContainerResources { requests, limits }
    }

    fn resources(&self) -> Resources {
        Resources {
            cpu_requests: self.requests.cpu(),
            cpu_limits: self.limits.cpu(),
            memory_requests: self.requests.memory(),
            memory_limits: self.limits.memory(),
        }
    }
}

/// A container's resources, and whether it is a sidecar (an init container that keeps running).
pub(crate) struct Demand {
    pub resources: ContainerResources,
    pub restart_always: bool,
}

/// What a pod asks of its node, as kube-scheduler counts it: the app containers' sum, against
/// each init container in turn (an init container runs alone, beside the sidecars started before
/// it; a sidecar — `restartPolicy: Always` — keeps running and adds to the sum), the larger of the
/// two, plus the pod's overhead. Limits are counted the same way; a container without a limit
/// adds nothing, as in `kubectl describe node`.
pub(crate) fn pod_demand(app: &[Demand], init: &[Demand], overhead: &Quantities) -> Resources {
    let mut total = app.iter().fold(Resources::default(), |sum, c| sum.plus(c.resources.resources()));
    let mut sidecars = Resources::default();
    let mut init_peak = Resources::default();
    for c in init {
        let own = c.resources.resources();
        let running = if c.restart_always {
            total = total.plus(own);
            sidecars = sidecars.plus(own);
            sidecars
        } else {
            own.plus(sidecars)
        };
        init_peak = init_peak.max(running);
    }
    let overhead = Resources {
        cpu_requests: overhead.cpu(),
        cpu_limits: overhead.cpu(),
        memory_requests: overhead.memory(),
        memory_limits: overhead.memory(),
    };
    total.max(init_peak).plus(overhead)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_quantities_are_summed_without_overflowing() {
        let huge = Resources { cpu_requests: bytes("9e18").unwrap(), memory_limits: i64::MAX, ..Resources::default() };
        let mut sum = huge;
        sum.add(huge);
        assert_eq!((sum.cpu_requests, sum.memory_limits), (i64::MAX, i64::MAX));
    }

    #[test]
    fn quantities() {
        assert_eq!(millicores("100m"), Some(100));
        assert_eq!(millicores("1"), Some(1000));
        assert_eq!(millicores("0.5"), Some(500));
        assert_eq!(millicores("2.0005"), Some(2001), "rounded up, as MilliValue does");
        assert_eq!(millicores("1e3"), Some(1_000_000));
        assert_eq!(millicores("250000u"), Some(250));
        assert_eq!(bytes("128Mi"), Some(134_217_728));
        assert_eq!(bytes("8029404Ki"), Some(8_222_109_696));
        assert_eq!(bytes("1G"), Some(1_000_000_000));
        assert_eq!(bytes("129e6"), Some(129_000_000));
        assert_eq!(bytes("1.5Gi"), Some(1_610_612_736));
        assert_eq!(bytes("12345"), Some(12345));
        assert_eq!(bytes("1Ei"), Some(1_152_921_504_606_846_976));
        assert_eq!(bytes("2E"), Some(2_000_000_000_000_000_000));
        assert_eq!(bytes("1Zi"), None);
        assert_eq!(bytes("lots"), None);
        assert_eq!(bytes(""), None);
    }

    fn demand(cpu_req: &str, mem_req: &str, cpu_lim: Option<&str>, mem_lim: Option<&str>, sidecar: bool) -> Demand {
        Demand {
            resources: ContainerResources {
                requests: Quantities { pods: None, cpu: Some(cpu_req.into()), memory: Some(mem_req.into()) },
                limits: Quantities { pods: None, cpu: cpu_lim.map(Into::into), memory: mem_lim.map(Into::into) },
            },
            restart_always: sidecar,
        }
    }

    #[test]
    fn app_containers_add_up() {
        let app =
            [demand("100m", "128Mi", Some("500m"), Some("256Mi"), false), demand("50m", "64Mi", None, None, false)];
        let r = pod_demand(&app, &[], &Quantities::default());
        assert_eq!(
            r,
            Resources { cpu_requests: 150, cpu_limits: 500, memory_requests: 201_326_592, memory_limits: 268_435_456 }
        );
    }

    #[test]
    fn an_init_container_counts_when_larger_than_the_app_containers() {
        let app = [demand("100m", "128Mi", None, None, false), demand("100m", "128Mi", None, None, false)];
        // CPU: the init container (500m) beats the sum (200m); memory: the sum (256Mi) beats it (64Mi).
        let init = [demand("500m", "64Mi", Some("1"), None, false)];
        let r = pod_demand(&app, &init, &Quantities::default());
        assert_eq!(r.cpu_requests, 500);
        assert_eq!(r.memory_requests, 268_435_456);
        assert_eq!(r.cpu_limits, 1000);
        assert_eq!(r.memory_limits, 0);
    }

    #[test]
    fn sidecars_run_beside_everything_after_them_and_overhead_is_added() {
        let app = [demand("200m", "100Mi", None, None, false)];
        // A sidecar of 100m, then an init container of 250m that runs beside it (350m).
        let init = [demand("100m", "10Mi", None, None, true), demand("250m", "10Mi", None, None, false)];
        let overhead = Quantities { pods: None, cpu: Some("10m".into()), memory: Some("1Mi".into()) };
        let r = pod_demand(&app, &init, &overhead);
        // App + sidecar = 300m < init phase 350m; + 10m overhead.
        assert_eq!(r.cpu_requests, 360);
        // App + sidecar = 110Mi > init phase 20Mi; + 1Mi.
        assert_eq!(r.memory_requests, 111 * 1024 * 1024);
        assert_eq!(r.cpu_limits, 10, "no limits: only the overhead");
    }
}
