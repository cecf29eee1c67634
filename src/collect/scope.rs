//! Namespaced access: a token that may read some namespaces and nothing cluster-wide (a
//! RoleBinding in each, as platform teams and hosting providers hand out). Each namespaced
//! collection is listed in each namespace, in parallel (at most [`AT_ONCE`] namespaces at a time
//! per collection), with the same pages, deadlines and error wording as a cluster-wide List, and
//! the lists joined. A namespace refused (403) or not found is one line, and the others are
//! read; the cluster-scoped reads (nodes, APIServices, the nodes' usage) are tried, and a 403 on
//! one of them leaves the cycle whole (see [`Namespaced`]).

use std::sync::Mutex;

use futures_util::{StreamExt, stream};

use super::optional::Namespaced;
use super::{Api, ReadList, unwrap_api};
use crate::collection::Collection;
use crate::error::{ReadError, ReadErrorKind};
use crate::kube::Fetcher;
use crate::kube::fetch::Listed;

/// One read of a namespace, boxed: a plain list of them is held across the awaits (a stream
/// mapped by a closure is not provably `Send` for every lifetime, which `tokio::spawn` needs).
type Reading<'a, T> = std::pin::Pin<Box<dyn Future<Output = Result<T, ReadError>> + Send + 'a>>;

/// Runs the reads, [`AT_ONCE`] at a time, their outcomes in the reads' order.
async fn at_once<T>(reads: Vec<Reading<'_, T>>) -> Vec<Result<T, ReadError>> {
    stream::iter(reads).buffered(AT_ONCE).collect().await
}

/// Namespaces listed at once, per collection: 40 namespaces and ten collections stay within
/// the API server's default of 400 requests in flight.
pub const AT_ONCE: usize = 8;

/// The namespace in which events about nodes are recorded (the event recorder's choice for a
/// cluster-scoped object).
const NODE_EVENTS_NAMESPACE: &str = "default";

/// The namespaces of one cycle, and what each refused.
pub struct Scope {
    namespaces: Vec<String>,
    /// (namespace's index, collection) of each 403.
    refused: Mutex<Vec<(usize, Collection)>>,
    /// The namespaces (by index) in which some List found an object.
    found: Mutex<Vec<bool>>,
}

/// Whether an error is the API server's 403.
pub fn forbidden(e: &ReadError) -> bool {
    matches!(e.kind, ReadErrorKind::Forbidden { .. })
}

impl Scope {
    /// None when the whole cluster is read (no `namespaces`). An ignored namespace is not read.
    pub fn new(namespaces: &[String], ignored: &[String]) -> Option<Scope> {
        if namespaces.is_empty() {
            return None;
        }
        let mut kept: Vec<String> = Vec::new();
        // Checked where they are configured; here too, since they go into the requests' paths
        // (an agent takes them from its server).
        for ns in namespaces.iter().filter(|n| crate::kube::check_name("", n).is_ok()) {
            if !ignored.contains(ns) && !kept.contains(ns) {
                kept.push(ns.clone());
            }
        }
        let found = Mutex::new(vec![false; kept.len()]);
        Some(Scope { namespaces: kept, refused: Mutex::new(Vec::new()), found })
    }

    /// One collection, listed in each namespace. A 403 in a namespace is noted and leaves that
    /// namespace's items out; any other failure is the read's failure, as a cluster-wide List's
    /// would be (a failed read resolves nothing). Refused in every namespace, the read is
    /// refused: the 403 of the first.
    pub async fn list<T: super::FromApi + Send>(
        &self,
        f: &Fetcher,
        c: Collection,
        selector: Option<&str>,
    ) -> ReadList<T> {
        let reads: Vec<Reading<'_, Listed<Api<T>>>> = self
            .namespaces
            .iter()
            .map(|ns| {
                let path = c.path_in(ns);
                let read: Reading<'_, Listed<Api<T>>> =
                    Box::pin(async move { f.list::<Api<T>>(c, &path, selector).await });
                read
            })
            .collect();
        let reads = at_once(reads).await;
        let mut items = Vec::new();
        let mut first_refusal = None;
        let mut granted = false;
        for (i, read) in reads.into_iter().enumerate() {
            match read {
                Ok(listed) => {
                    granted = true;
                    if !listed.items.is_empty() {
                        self.found.lock().expect("found")[i] = true;
                    }
                    items.extend(unwrap_api(listed.items));
                }
                Err(e) if forbidden(&e) => {
                    self.refused.lock().expect("refusals").push((i, c));
                    first_refusal.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        match first_refusal {
            Some(e) if !granted => Err(e),
            _ => Ok((items, None)),
        }
    }

    /// Which namespaces the API server says do not exist (a GET of it: 404), asked only of
    /// those whose every List answered and found nothing (a List in a namespace that does not
    /// exist answers an empty list to a token that may list there). A token that may not get
    /// namespaces learns nothing so (403): with namespaced rights alone, a namespace that does
    /// not exist is refused like one not granted, and is not asked about.
    pub async fn not_found(&self, f: &Fetcher) -> Vec<bool> {
        let found = self.found.lock().expect("found").clone();
        let refused: Vec<usize> = self.refused.lock().expect("refusals").iter().map(|(i, _)| *i).collect();
        let reads: Vec<Reading<'_, bool>> = self
            .namespaces
            .iter()
            .enumerate()
            .map(|(i, ns)| {
                let ask = !found[i] && !refused.contains(&i);
                let read: Reading<'_, bool> = Box::pin(async move {
                    if !ask {
                        return Ok(false);
                    }
                    let got =
                        f.get::<serde::de::IgnoredAny>(Collection::PODS, &format!("/api/v1/namespaces/{ns}")).await;
                    Ok(matches!(got, Err(ReadError { kind: ReadErrorKind::Status { code: 404, .. }, .. })))
                });
                read
            })
            .collect();
        at_once(reads).await.into_iter().map(|found| found.unwrap_or(false)).collect()
    }

    /// What the cycle says of its access: the namespaces read, a line for each that was not
    /// (or only in part), and what cluster-wide it could not see.
    pub fn finish(self, not_found: &[bool], nodes_hidden: bool) -> Namespaced {
        let mut refused = self.refused.into_inner().expect("refusals");
        refused.sort_by_key(|(n, c)| (*n, super::kinds::rank(*c)));
        refused.dedup();
        // An optional read refused in every namespace is not granted at all: said once, as
        // cluster-wide (the optional reads' line), not in each namespace's.
        let everywhere = |c: Collection| refused.iter().filter(|(_, r)| *r == c).count() == self.namespaces.len();
        let mut read = Vec::new();
        let mut unread = Vec::new();
        let mut problems = Vec::new();
        for (i, ns) in self.namespaces.iter().enumerate() {
            if not_found.get(i).copied().unwrap_or(false) {
                problems.push(format!("{ns}: not found"));
                unread.push(ns.clone());
                continue;
            }
            let mut resources: Vec<Collection> =
                refused.iter().filter(|(n, c)| *n == i && !(c.optional() && everywhere(*c))).map(|(_, c)| *c).collect();
            resources.sort_by_key(|c| super::kinds::rank(*c));
            if resources.iter().any(|c| !c.optional()) {
                problems.push(refusal_line(ns, &resources));
                unread.push(ns.clone());
            } else {
                read.push(ns.clone());
                if !resources.is_empty() {
                    problems.push(refusal_line(ns, &resources));
                }
            }
        }
        let node_events_hidden = !read.iter().any(|n| n == NODE_EVENTS_NAMESPACE);
        Namespaced { asked: self.namespaces.len(), read, unread, problems, nodes_hidden, node_events_hidden }
    }
}

/// `team-c: the service account may not list pods (403)`: the first resource refused when the
/// namespace refused every core read (not granted at all), else each one refused.
fn refusal_line(ns: &str, refused: &[Collection]) -> String {
    let core = |c: &&Collection| !c.optional() && c.namespaced();
    let all_core = Collection::ALL.iter().filter(core).all(|c| refused.contains(c));
    let named: Vec<&str> = if all_core {
        refused.iter().take(1).map(|c| c.resource()).collect()
    } else {
        refused.iter().map(|c| c.resource()).collect()
    };
    format!("{ns}: the service account may not list {} (403)", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::kinds::{Kind, hpa::Hpa, job::Job};

    fn scope(namespaces: &[&str], ignored: &[&str]) -> Scope {
        let s = |v: &[&str]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        Scope::new(&s(namespaces), &s(ignored)).expect("namespaced")
    }

    #[test]
    fn the_whole_cluster_without_namespaces_and_ignored_ones_are_not_read() {
        assert!(Scope::new(&[], &[]).is_none());
        assert_eq!(scope(&["a", "b", "a", "ci"], &["ci"]).namespaces, ["a", "b"]);
        assert_eq!(scope(&["a", "../../api/v1/secrets", "B"], &[]).namespaces, ["a"], "never into a path");
    }

    #[test]
    fn each_namespace_not_read_is_one_line_and_optional_refusals_leave_it_read() {
        let s = scope(&["team-a", "team-b", "team-c", "gone", "default"], &[]);
        s.refused.lock().unwrap().extend([
            (2, Collection::DEPLOYMENTS),
            (2, Collection::PODS),
            (2, Collection::PODS),
            (1, Job::COLLECTION),
        ]);
        // Not granted at all: every read refused, the first named.
        let every = crate::collect::kinds::every().into_iter().filter(|c| c.namespaced());
        s.refused.lock().unwrap().extend(every.map(|c| (4, c)));
        let n = s.finish(&[false, false, false, true, false], true);
        assert_eq!(n.read, ["team-a", "team-b"]);
        assert_eq!(
            n.problems,
            [
                "team-b: the service account may not list jobs.batch (403)",
                "team-c: the service account may not list pods, deployments.apps (403)",
                "gone: not found",
                "default: the service account may not list pods (403)",
            ]
        );
        assert_eq!(n.asked, 5);
        assert_eq!(n.unread, ["team-c", "gone", "default"]);
        // Refused in every namespace, an optional read is not named in any line.
        let two = scope(&["a", "b"], &[]);
        two.refused.lock().unwrap().extend([(0, Job::COLLECTION), (1, Job::COLLECTION), (1, Hpa::COLLECTION)]);
        let both = two.finish(&[false, false], false);
        assert_eq!(both.problems, ["b: the service account may not list horizontalpodautoscalers.autoscaling (403)"]);
        assert_eq!(both.read, ["a", "b"]);
        assert!(n.nodes_hidden);
        assert!(n.node_events_hidden, "default, where events about nodes are, was not read");
        let s = scope(&["default"], &[]);
        assert!(!s.finish(&[false], false).node_events_hidden, "events about nodes are in default, which is read");
        assert!(scope(&["team-a"], &[]).finish(&[false], false).node_events_hidden);
    }
}
