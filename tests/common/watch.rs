//! Watch mode beside list mode: the same cluster read both ways at the same rule time.

use std::time::{Duration, Instant};

use dumbmonit::collect::follow::Follower;
use dumbmonit::collect::reader::Connected;
use dumbmonit::collect::{CycleOptions, Snapshot};
use dumbmonit::rules::RuleState;

/// What must agree: the snapshot but for its time-bound parts.
fn comparable(mut s: Snapshot) -> Snapshot {
    s.certificates = Default::default();
    s
}

/// The rules' state of each mode, observed at each step.
#[derive(Default)]
pub struct Rules {
    listed: RuleState,
    watched: RuleState,
}

/// Reads the cluster both ways at the same rule time until they agree (the watch may be a
/// moment behind a change), then compares what follows (the sentence, the object series, the
/// alerts each mode's rules hold after this step) and returns the sentence; fails if they do not
/// agree within 30 s.
pub async fn agreed(
    step: &str,
    connected: &Connected,
    follower: &Follower,
    options: &CycleOptions,
    rules: &mut Rules,
) -> String {
    let started = Instant::now();
    let now = jiff::Timestamp::now();
    loop {
        let listed = connected.read(options, now).await.result.expect("the list cycle reads");
        let watched = follower.cycle(options, now).await.result.expect("the watch cycle reads");
        let (listed, watched) = (comparable(listed), comparable(watched));
        if listed == watched {
            let health = dumbmonit::health::assess(listed);
            let watched_health = dumbmonit::health::assess(watched);
            assert_eq!(health.summary(), watched_health.summary(), "{step}");
            let a = dumbmonit::metrics::cycle_series("c", Some(&health), Duration::ZERO, &[], &mut Default::default());
            let b = dumbmonit::metrics::cycle_series(
                "c",
                Some(&watched_health),
                Duration::ZERO,
                &[],
                &mut Default::default(),
            );
            assert_eq!(format!("{:?}", a.objects), format!("{:?}", b.objects), "{step}: the metrics");
            rules.listed.observe(now, "c", &health);
            rules.watched.observe(now, "c", &watched_health);
            assert_eq!(rules.listed.alerts, rules.watched.alerts, "{step}: the alerts");
            return health.summary();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{step}: watch mode never caught up with the list:\nlisted {listed:#?}\nwatched {watched:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
