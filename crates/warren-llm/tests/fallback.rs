//! Fallbacks: 5xx, 429, refused connections and timeouts move on; other 4xx and failures after
//! streaming started do not.

use crate::common::*;
use std::time::{Duration, Instant};
use warren_llm::{LlmError, ProviderFamily, RouteEvent, TimeoutPhase};
use warren_testkit::fake_llm::{closed_port_uri, Reply};
use warren_types::LlmErrorCode;

/// Entry timeout in these tests: short, yet far above a loaded machine's loopback latency.
const SHORT: Duration = Duration::from_millis(800);

/// A primary of family `f` scripted with `first`, and a fallback of the same family answering
/// "from the fallback".
async fn primary_then_fallback(
    f: ProviderFamily,
    first: Reply,
) -> (
    Result<warren_llm::ChatResponse, LlmError>,
    Vec<RouteEvent>,
    usize,
    usize,
) {
    let primary = fake(f);
    let backup = fake(f);
    primary.push(first);
    backup.push(Reply::text("from the fallback"));
    let route = route_of(
        vec![entry(&primary, "main"), entry(&backup, "backup")],
        SHORT,
    );
    let (res, events) = chat(&route, &hello()).await;
    // leave the backup's script untouched when it was not called
    let (p, b) = (primary.request_count(), backup.request_count());
    (res, events, p, b)
}

async fn status_500_then_fallback(f: ProviderFamily) {
    let (res, events, p, b) = primary_then_fallback(f, Reply::error(500, "internal")).await;
    let resp = res.unwrap();
    assert_eq!(resp.text, "from the fallback");
    assert_eq!(resp.provider, format!("{}.backup", f.as_str()));
    assert_eq!((p, b), (1, 1));
    let main = format!("{}.main", f.as_str());
    let backup = format!("{}.backup", f.as_str());
    assert_eq!(attempts(&events), [(main.clone(), 1), (backup, 2)]);
    assert_eq!(failures(&events), [(main, "provider_http", true)]);
    // the failure message names the status and the vendor's message
    let msg = events
        .iter()
        .find_map(|e| match e {
            RouteEvent::AttemptFailed { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        msg.contains("HTTP 500") && msg.contains("internal"),
        "{msg}"
    );
}

async fn status_429_falls_back(f: ProviderFamily) {
    let (res, events, p, b) = primary_then_fallback(f, Reply::error(429, "slow down")).await;
    assert_eq!(res.unwrap().text, "from the fallback");
    assert_eq!((p, b), (1, 1));
    assert_eq!(failures(&events)[0].1, "provider_http");
}

async fn status_400_does_not_fall_back(f: ProviderFamily) {
    let (res, events, p, b) = primary_then_fallback(f, Reply::error(400, "bad field xyz")).await;
    let err = res.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::ProviderHttp);
    assert_eq!(err.http_status(), Some(400));
    assert_eq!(err.entry(), Some(format!("{}.main", f.as_str()).as_str()));
    let msg = err.to_string();
    assert!(
        msg.contains("bad field xyz") && msg.contains("HTTP 400"),
        "{msg}"
    );
    assert!(msg.contains("http://127.0.0.1:"), "names the URL: {msg}");
    assert_eq!((p, b), (1, 0), "the fallback was not called");
    assert_eq!(
        failures(&events),
        [(format!("{}.main", f.as_str()), "provider_http", false)]
    );
}

async fn status_401_does_not_fall_back(f: ProviderFamily) {
    let (res, _, p, b) = primary_then_fallback(f, Reply::error(401, "invalid key")).await;
    assert_eq!(res.unwrap_err().http_status(), Some(401));
    assert_eq!((p, b), (1, 0));
}

async fn connection_refused_falls_back(f: ProviderFamily) {
    let backup = fake(f);
    backup.push(Reply::text("from the fallback"));
    let dead = entry_at(f, "dead", &closed_port_uri().unwrap());
    let route = route_of(vec![dead, entry(&backup, "backup")], SHORT);
    let (res, events) = chat(&route, &hello()).await;
    assert_eq!(res.unwrap().text, "from the fallback");
    assert_eq!(
        failures(&events),
        [(format!("{}.dead", f.as_str()), "provider_unreachable", true)]
    );
}

async fn connection_refused_alone_is_a_clear_error(f: ProviderFamily) {
    let uri = closed_port_uri().unwrap();
    let route = route_of(vec![entry_at(f, "dead", &uri)], SHORT);
    let err = chat(&route, &hello()).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::ProviderUnreachable);
    let msg = err.to_string();
    assert!(
        msg.contains(&uri) && msg.contains(&format!("{}.dead", f.as_str())),
        "{msg}"
    );
}

async fn timeout_falls_back(f: ProviderFamily) {
    let started = Instant::now();
    let (res, events, p, b) =
        primary_then_fallback(f, Reply::text("too late").delay(Duration::from_secs(5))).await;
    assert_eq!(res.unwrap().text, "from the fallback");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "did not wait for the slow server"
    );
    assert_eq!((p, b), (1, 1));
    assert_eq!(failures(&events)[0].1, "provider_timeout");
}

async fn stalled_stream_times_out(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("one two three four").frame_delay(Duration::from_secs(3)));
    let route = route_of(vec![entry(&fake, "main")], SHORT);
    let err = chat(&route, &hello()).await.0.unwrap_err();
    match &err {
        LlmError::Timeout { phase, after, .. } => {
            assert_eq!(*phase, TimeoutPhase::Body);
            assert_eq!(*after, SHORT);
        }
        other => panic!("expected a body timeout, got {other:?}"),
    }
}

async fn every_entry_failing_returns_the_last_error(f: ProviderFamily) {
    let a = fake(f);
    let b = fake(f);
    a.push(Reply::error(503, "first down"));
    b.push(Reply::error(502, "second down"));
    let route = route_of(vec![entry(&a, "a"), entry(&b, "b")], SHORT);
    let (res, events) = chat(&route, &hello()).await;
    let err = res.unwrap_err();
    assert_eq!(err.http_status(), Some(502));
    assert!(err.to_string().contains("second down"));
    let fails = failures(&events);
    assert_eq!(fails.len(), 2);
    assert!(
        fails[0].2 && !fails[1].2,
        "the last failure does not fall back: {fails:?}"
    );
}

async fn no_fallback_once_text_was_streamed(f: ProviderFamily) {
    let primary = fake(f);
    let backup = fake(f);
    primary.push(Reply::text("partial answer that gets cut").cut_after(4));
    let route = route_of(
        vec![entry(&primary, "main"), entry(&backup, "backup")],
        SHORT,
    );
    let (res, events) = chat(&route, &hello()).await;
    assert_eq!(res.unwrap_err().code(), LlmErrorCode::StreamInterrupted);
    assert!(!text_deltas(&events).is_empty(), "some text was shown");
    assert_eq!(backup.request_count(), 0);
}

per_family!(
    status_500_then_fallback,
    status_429_falls_back,
    status_400_does_not_fall_back,
    status_401_does_not_fall_back,
    connection_refused_falls_back,
    connection_refused_alone_is_a_clear_error,
    timeout_falls_back,
    stalled_stream_times_out,
    every_entry_failing_returns_the_last_error,
    no_fallback_once_text_was_streamed,
);

/// A route mixing families falls back across protocols.
#[tokio::test]
async fn fallback_crosses_families() {
    let openai = fake(ProviderFamily::Openai);
    let anthropic = fake(ProviderFamily::Anthropic);
    let ollama = fake(ProviderFamily::Ollama);
    openai.push(Reply::error(500, "boom"));
    anthropic.push(Reply::error(529, "overloaded"));
    ollama.push(Reply::text("llama answers"));
    let route = route_of(
        vec![
            entry(&openai, "main"),
            entry(&anthropic, "claude"),
            entry(&ollama, "local"),
        ],
        SHORT,
    );
    let (res, events) = chat(&route, &hello()).await;
    let resp = res.unwrap();
    assert_eq!(resp.text, "llama answers");
    assert_eq!(resp.provider, "ollama.local");
    assert_eq!(
        attempts(&events),
        [
            ("openai.main".into(), 1),
            ("anthropic.claude".into(), 2),
            ("ollama.local".into(), 3)
        ]
    );
}
