//! Provider client costs: SSE parsing throughput, and the whole per-request overhead of a route
//! call (build, send, stream, decode) against an instant fake server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::sync::Arc;
use warren_llm::sse::SseParser;
use warren_llm::{
    ChatRequest, Message, NoKeys, ProviderEntry, ProviderFamily, Providers, ProxyMode,
};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::ProviderModel;

/// About 1 MiB of OpenAI-style chunk events.
fn openai_stream() -> Vec<u8> {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 1 << 20 {
        s.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{i} \"}},\"finish_reason\":null}}]}}\n\n"
        ));
        i += 1;
    }
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

fn sse_parse(c: &mut Criterion) {
    let bytes = openai_stream();
    let mut g = c.benchmark_group("sse");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("parse_1MiB_in_1400B_chunks", |b| {
        b.iter(|| {
            let mut p = SseParser::new();
            let mut out = Vec::with_capacity(64);
            let mut n = 0;
            for chunk in bytes.chunks(1400) {
                p.feed(chunk, &mut out).unwrap();
                n += out.len();
                out.clear();
            }
            n
        });
    });
    g.finish();
}

fn round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let providers = Providers::with_proxy(Arc::new(NoKeys), ProxyMode::Direct).unwrap();
    let req = ChatRequest::new("You are terse.", vec![Message::user("hi")]);
    let mut g = c.benchmark_group("round_trip");
    for family in [
        ProviderFamily::Openai,
        ProviderFamily::Anthropic,
        ProviderFamily::Ollama,
    ] {
        let fake = FakeLlm::start(family).unwrap();
        let model = ProviderModel {
            model: "fake-model".into(),
            uri: Some(fake.uri()),
            ..ProviderModel::default()
        };
        let entry = ProviderEntry::new(&format!("{}.bench", family.as_str()), family, &model);
        let route = providers.route_of(vec![entry]);
        g.bench_function(format!("{}_streamed_short_answer", family.as_str()), |b| {
            b.iter(|| {
                fake.push(Reply::text("Hello there, this is a short answer."));
                rt.block_on(async { route.chat(&req, &mut |_e| {}).await.unwrap() })
            });
        });
    }
    g.finish();
}

criterion_group!(benches, sse_parse, round_trip);
criterion_main!(benches);
