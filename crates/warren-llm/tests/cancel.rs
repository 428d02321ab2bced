//! Dropping a call in flight cancels it promptly (the loop's cancel button relies on it).

use crate::common::*;
use std::time::{Duration, Instant};
use warren_llm::{ProviderFamily, RouteEvent, StreamEvent};
use warren_testkit::fake_llm::Reply;

async fn dropping_the_call_mid_stream_cancels_it(f: ProviderFamily) {
    let fake = fake(f);
    // eight words, 400 ms apart: about 3 s if left to finish
    fake.push(
        Reply::text("one two three four five six seven eight")
            .frame_delay(Duration::from_millis(400)),
    );
    let route = route_to(&fake);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let task = tokio::spawn(async move {
        let mut sink = |e: RouteEvent| {
            let _ = tx.send(e);
        };
        route.chat(&hello(), &mut sink).await
    });
    assert!(fake.wait_for_requests(1, Duration::from_secs(5)).await);
    // wait for the first piece of text, then cancel
    loop {
        match rx.recv().await {
            Some(RouteEvent::Stream(StreamEvent::TextDelta { .. })) => break,
            Some(_) => continue,
            None => panic!("the call ended before any text arrived"),
        }
    }
    task.abort();
    let joined = task.await;
    assert!(joined.unwrap_err().is_cancelled());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "cancelled before the stream finished"
    );
    assert_eq!(fake.request_count(), 1);
}

per_family!(dropping_the_call_mid_stream_cancels_it);

#[tokio::test]
async fn wait_for_requests_times_out_when_none_come() {
    let fake = fake(ProviderFamily::Ollama);
    assert!(!fake.wait_for_requests(1, Duration::from_millis(100)).await);
}
