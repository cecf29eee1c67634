//! Silences and windows in the ecosystem's shapes: Alertmanager's API v2 silence (what
//! `POST /api/v2/silences` takes, what `GET /api/v2/silences` lists), read with every check, and
//! written back; the maintenance windows' JSON beside them.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::maintenance::{Spec, When, Window};
use super::{Matcher, MatcherError, MatchersError, Op, Silence, cost};

/// One matcher as Alertmanager's API writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiMatcher {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub is_regex: bool,
    #[serde(default = "yes")]
    pub is_equal: bool,
}

fn yes() -> bool {
    true
}

impl ApiMatcher {
    /// Its name, how it compares and its value.
    pub fn parts(&self) -> (&str, Op, &str) {
        (&self.name, Op::of(self.is_regex, self.is_equal), &self.value)
    }
}

impl From<MatchersError> for SilenceError {
    fn from(e: MatchersError) -> SilenceError {
        match e {
            MatchersError::TooMany { count } => SilenceError::TooManyMatchers { count },
            MatchersError::Matcher { index, source } => SilenceError::Matcher { index, source },
            MatchersError::OverBudget { index } => SilenceError::OverBudget { index },
        }
    }
}

/// Alertmanager's postable silence: with `id`, it changes that silence. Fields Alertmanager
/// lists beside these (`status`, `updatedAt`) are taken and ignored, so that a listed silence can
/// be posted back changed.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostableSilence {
    #[serde(default)]
    pub id: Option<String>,
    pub matchers: Vec<ApiMatcher>,
    /// When absent: now.
    #[serde(default)]
    pub starts_at: Option<String>,
    pub ends_at: String,
    /// When absent: who made the request.
    #[serde(default)]
    pub created_by: Option<String>,
    #[serde(default)]
    pub comment: String,
}

/// Why a silence was refused: the field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SilenceError {
    #[error(
        "field `matchers`: give at least one matcher, such as {{\"name\": \"alertname\", \"value\": \"KubernetesPodBlocked\"}}"
    )]
    NoMatchers,
    #[error("field `matchers[{index}]`: {source}")]
    Matcher { index: usize, source: MatcherError },
    #[error("field `matchers`: {count} matchers; a silence has at most {}", cost::MAX_MATCHERS)]
    TooManyMatchers { count: usize },
    #[error(
        "field `matchers[{index}]`: the regular expressions of one silence take at most {} compiled together, and with this one they would take more",
        cost::size(cost::SILENCE_BUDGET)
    )]
    OverBudget { index: usize },
    #[error(
        "field `matchers`: these match every alert of every cluster; name what to silence (a cluster, an alertname…), or confirm that everything is to be silenced"
    )]
    Everything,
    #[error("field `{field}`: {value:?} is not an RFC 3339 time (such as 2026-12-06T02:00:00Z)")]
    Time { field: &'static str, value: String },
    #[error("field `{field}`: {len} bytes; it has at most {most}")]
    TextTooLong { field: &'static str, len: usize, most: usize },
    #[error("field `endsAt`: not after `startsAt`")]
    EndFirst,
    #[error("field `endsAt`: already past")]
    Past,
    #[error("field `endsAt`: a silence lasts at most a year")]
    TooLong,
    #[error("field `id`: no silence {id:?}")]
    Unknown { id: String },
    #[error("field `id`: silence {id:?} is from the configuration file: change it there")]
    FromFile { id: String },
    #[error("field `id`: silence {id:?} has expired: make a new one")]
    Expired { id: String },
}

/// The longest silence.
pub const LONGEST: SignedDuration = SignedDuration::from_hours(366 * 24);

impl PostableSilence {
    /// The silence it makes at `now`: `id` (a new one's, or the one it changes), `who` when it
    /// names nobody. `everything` confirms a silence that matches every alert.
    pub fn silence(&self, id: String, who: &str, now: Timestamp, everything: bool) -> Result<Silence, SilenceError> {
        if self.matchers.is_empty() {
            return Err(SilenceError::NoMatchers);
        }
        // A change keeps the author it has, whoever made it and however long it is.
        let new = self.id.as_deref().is_none_or(str::is_empty);
        for (field, text, most) in [
            ("comment", self.comment.as_str(), super::MAX_COMMENT),
            ("createdBy", if new { self.created_by.as_deref().unwrap_or("") } else { "" }, super::MAX_CREATED_BY),
        ] {
            if text.len() > most {
                return Err(SilenceError::TextTooLong { field, len: text.len(), most });
            }
        }
        let matchers = super::budgeted(self.matchers.iter().map(ApiMatcher::parts), true)?;
        if !everything && matchers.iter().all(Matcher::matches_anything) {
            return Err(SilenceError::Everything);
        }
        let time = |field: &'static str, value: &str| {
            value.trim().parse::<Timestamp>().map_err(|_| SilenceError::Time { field, value: value.to_string() })
        };
        let starts_at = match &self.starts_at {
            Some(s) => time("startsAt", s)?,
            None => now,
        };
        let ends_at = time("endsAt", &self.ends_at)?;
        if ends_at <= starts_at {
            return Err(SilenceError::EndFirst);
        }
        if ends_at <= now {
            return Err(SilenceError::Past);
        }
        if ends_at.duration_since(starts_at) > LONGEST {
            return Err(SilenceError::TooLong);
        }
        let created_by = self.created_by.as_deref().map(str::trim).filter(|s| !s.is_empty()).unwrap_or(who);
        Ok(Silence {
            id,
            matchers,
            starts_at: Some(starts_at),
            ends_at: Some(ends_at),
            updated_at: Some(now),
            comment: self.comment.clone(),
            created_by: created_by.to_string(),
            from_file: false,
        })
    }
}

fn time(t: Option<Timestamp>) -> Value {
    t.map(|t| json!(t.to_string())).unwrap_or(Value::Null)
}

/// A silence as Alertmanager's `GET /api/v2/silences` lists it (and as it is stored); a file's
/// silence has no start nor end (`null`) and says `from_file`.
pub fn silence_json(s: &Silence, now: Timestamp) -> Value {
    json!({
        "id": s.id,
        "status": {"state": s.state(now).as_str()},
        "matchers": s.matchers.iter().map(|m| json!({
            "name": m.name,
            "value": m.value,
            "isRegex": m.is_regex(),
            "isEqual": m.is_equal(),
        })).collect::<Vec<_>>(),
        "startsAt": time(s.starts_at),
        "endsAt": time(s.ends_at),
        "createdBy": s.created_by,
        "comment": s.comment,
        "updatedAt": time(s.updated_at),
        "from_file": s.from_file,
    })
}

/// A silence as Alertmanager's `POST /api/v2/silences` takes it (with its `id` when it changes
/// one).
pub fn postable_json(s: &Silence) -> Value {
    let mut v = silence_json(s, s.starts_at.unwrap_or_default());
    if let Some(o) = v.as_object_mut() {
        for k in ["status", "updatedAt", "from_file"] {
            o.remove(k);
        }
        if s.id.is_empty() {
            o.remove("id");
        }
    }
    v
}

/// Why a stored silence, or one of Alertmanager's, is not read back.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StoredError {
    #[error("not a silence: {0}")]
    Unreadable(String),
    #[error(transparent)]
    Matchers(#[from] MatchersError),
}

/// A stored silence read back (what [`silence_json`] wrote; Alertmanager lists its own so).
/// Its regular expressions are compiled under the silence's budget, unless it has expired by
/// `now`: then they are only read (an expired silence mutes nothing).
pub fn stored_silence(text: &str, now: Timestamp) -> Result<Silence, StoredError> {
    stored_silence_within(text, now, cost::SILENCE_BUDGET)
}

/// As [`stored_silence`], its expressions compiled in at most `budget` bytes (what is left of
/// the budget of all silences in force).
pub fn stored_silence_within(text: &str, now: Timestamp, budget: usize) -> Result<Silence, StoredError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Stored {
        id: String,
        matchers: Vec<ApiMatcher>,
        starts_at: Option<Timestamp>,
        ends_at: Option<Timestamp>,
        updated_at: Option<Timestamp>,
        created_by: String,
        comment: String,
    }
    let s: Stored = serde_json::from_str(text).map_err(|e| StoredError::Unreadable(e.to_string()))?;
    let expired = s.ends_at.is_some_and(|end| end <= now);
    let matchers = super::budgeted_within(s.matchers.iter().map(ApiMatcher::parts), !expired, budget)?;
    Ok(Silence {
        id: s.id,
        matchers,
        starts_at: s.starts_at,
        ends_at: s.ends_at,
        updated_at: s.updated_at,
        comment: s.comment,
        created_by: s.created_by,
        from_file: false,
    })
}

/// `POST /api/v1/maintenance`: a one-off window (`startsAt`, `endsAt`) or a recurring one
/// (`schedule`, `timeZone`, `duration`). A field it does not know is refused, but for those the
/// list gives (`status`, `updatedAt`, `from_file`), so that a listed window can be posted back.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostableWindow {
    #[serde(default)]
    pub status: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub updated_at: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "from_file")]
    pub from_file: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    pub id: Option<String>,
    pub cluster: String,
    #[serde(default)]
    pub starts_at: Option<String>,
    #[serde(default)]
    pub ends_at: Option<String>,
    #[serde(default)]
    pub schedule: Option<String>,
    #[serde(default)]
    pub time_zone: Option<String>,
    #[serde(default)]
    pub duration: Option<String>,
    #[serde(default)]
    pub comment: String,
    #[serde(default)]
    pub created_by: Option<String>,
}

impl PostableWindow {
    pub fn spec(&self) -> Spec {
        Spec {
            cluster: self.cluster.clone(),
            start: self.starts_at.clone(),
            end: self.ends_at.clone(),
            schedule: self.schedule.clone(),
            time_zone: self.time_zone.clone(),
            duration: self.duration.clone(),
            comment: self.comment.clone(),
        }
    }
}

/// A window as the API lists it (and as it is stored).
pub fn window_json(w: &Window, now: Timestamp) -> Value {
    let mut v = json!({
        "id": w.id,
        "cluster": w.clusters.to_string(),
        "status": {"state": w.state(now)},
        "comment": w.comment,
        "createdBy": w.created_by,
        "updatedAt": time(w.updated_at),
        "from_file": w.from_file,
    });
    match &w.when {
        When::Once { start, end } => {
            v["startsAt"] = json!(start.to_string());
            v["endsAt"] = json!(end.to_string());
        }
        When::Every { schedule, zone, duration, .. } => {
            v["schedule"] = json!(schedule);
            v["timeZone"] = json!(zone.name());
            v["duration"] = json!(format!("{duration:#}"));
        }
    }
    v
}

/// Why a stored window is not read back.
#[derive(Debug, thiserror::Error)]
pub enum StoredWindowError {
    #[error("not a maintenance window: {0}")]
    Unreadable(String),
    #[error(transparent)]
    Window(#[from] super::maintenance::WindowError),
}

/// A stored window read back (what [`window_json`] wrote).
pub fn stored_window(text: &str) -> Result<Window, StoredWindowError> {
    let v: Value = serde_json::from_str(text).map_err(|e| StoredWindowError::Unreadable(e.to_string()))?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let spec = Spec {
        cluster: s("cluster").unwrap_or_default(),
        start: s("startsAt"),
        end: s("endsAt"),
        schedule: s("schedule"),
        time_zone: s("timeZone"),
        duration: s("duration"),
        comment: s("comment").unwrap_or_default(),
    };
    let mut w = Window::from_spec(
        s("id").unwrap_or_default(),
        &spec,
        super::maintenance::API,
        s("createdBy").unwrap_or_default(),
        false,
        None,
    )?;
    w.updated_at = s("updatedAt").and_then(|t| t.parse().ok());
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-12-01T06:00:00Z".parse().unwrap()
    }

    fn body(text: &str) -> PostableSilence {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn alertmanagers_body_makes_a_silence_and_is_listed_back_in_its_shape() {
        let b = body(
            r#"{"matchers": [{"name": "alertname", "value": "KubernetesPodCrashLooping", "isRegex": false},
                {"name": "namespace", "value": "dev-.*", "isRegex": true, "isEqual": true}],
               "startsAt": "2026-12-01T06:00:00Z", "endsAt": "2026-12-01T08:00:00Z",
               "createdBy": "ops", "comment": "known", "status": {"state": "active"}}"#,
        );
        let s = b.silence("id-1".into(), "admin token", now(), false).unwrap();
        assert_eq!(s.matchers_text(), r#"{alertname="KubernetesPodCrashLooping", namespace=~"dev-.*"}"#);
        assert_eq!(s.created_by, "ops");
        let listed = silence_json(&s, now());
        assert_eq!(listed["status"]["state"], "active");
        assert_eq!(
            listed["matchers"][1],
            json!({"name": "namespace", "value": "dev-.*", "isRegex": true, "isEqual": true})
        );
        assert_eq!(listed["endsAt"], "2026-12-01T08:00:00Z");
        let back = stored_silence(&listed.to_string(), now()).unwrap();
        assert_eq!(back, s);
        // No start: now; no author: who asked.
        let s = body(r#"{"matchers": [{"name": "pod", "value": "x"}], "endsAt": "2026-12-01T07:00:00Z"}"#)
            .silence("id-2".into(), "admin token", now(), false)
            .unwrap();
        assert_eq!((s.starts_at, s.created_by.as_str()), (Some(now()), "admin token"));
    }

    #[test]
    fn bad_silences_are_refused_naming_the_field() {
        let refused = |text: &str| body(text).silence("x".into(), "a", now(), false).unwrap_err().to_string();
        let m = r#""matchers": [{"name": "pod", "value": "x"}]"#;
        assert!(refused(r#"{"matchers": [], "endsAt": "2026-12-01T07:00:00Z"}"#).starts_with("field `matchers`: give"));
        assert!(
            refused(r#"{"matchers": [{"name": "pod", "value": "x"}, {"name": "pod", "value": "(", "isRegex": true}], "endsAt": "2026-12-01T07:00:00Z"}"#)
                .starts_with("field `matchers[1]`: \"pod=~\\\"(\\\"\": the regular expression does not compile")
        );
        assert!(
            refused(r#"{"matchers": [{"name": "team", "value": "x"}], "endsAt": "2026-12-01T07:00:00Z"}"#)
                .starts_with("field `matchers[0]`: \"team=\\\"x\\\"\": no alert of DumbMonit has the label \"team\"")
        );
        assert!(refused(r#"{"matchers": [{"name": "namespace", "value": ".*", "isRegex": true}], "endsAt": "2026-12-01T07:00:00Z"}"#)
            .starts_with("field `matchers`: these match every alert of every cluster"));
        assert_eq!(
            refused(&format!(r#"{{{m}, "startsAt": "2026-12-01T08:00:00Z", "endsAt": "2026-12-01T07:00:00Z"}}"#)),
            "field `endsAt`: not after `startsAt`"
        );
        assert_eq!(
            refused(&format!(r#"{{{m}, "startsAt": "2026-11-01T08:00:00Z", "endsAt": "2026-11-01T09:00:00Z"}}"#)),
            "field `endsAt`: already past"
        );
        assert_eq!(
            refused(&format!(r#"{{{m}, "endsAt": "2028-12-01T07:00:00Z"}}"#)),
            "field `endsAt`: a silence lasts at most a year"
        );
        assert!(
            refused(&format!(r#"{{{m}, "endsAt": "soon"}}"#))
                .starts_with("field `endsAt`: \"soon\" is not an RFC 3339 time")
        );
        // Confirmed, a silence of everything is taken.
        let all = body(
            r#"{"matchers": [{"name": "namespace", "value": ".*", "isRegex": true}], "endsAt": "2026-12-01T07:00:00Z"}"#,
        );
        assert!(all.silence("x".into(), "a", now(), true).is_ok());
    }

    #[test]
    fn windows_are_listed_and_read_back() {
        let w: PostableWindow = serde_json::from_str(
            r#"{"cluster": "{cluster=~\"edge-.*\"}", "schedule": "0 2 * * 0", "timeZone": "Europe/Paris", "duration": "2h", "comment": "k3s upgrades"}"#,
        )
        .unwrap();
        let w = Window::from_spec(
            "w-1".into(),
            &w.spec(),
            super::super::maintenance::API,
            "ops".into(),
            false,
            Some(now()),
        )
        .unwrap();
        let listed = window_json(&w, now());
        assert_eq!(listed["cluster"], r#"{cluster=~"edge-.*"}"#);
        assert_eq!(listed["timeZone"], "Europe/Paris");
        assert_eq!(listed["duration"], "2h");
        assert_eq!(listed["status"]["state"], "scheduled");
        assert_eq!(stored_window(&listed.to_string()).unwrap(), w);
    }
}
