//! One call through the gates: approvals, autonomy, budget, tool lists.

use crate::fixture::{call, run, Fixture, FAMILY};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use warren_policy::ManualClock;
use warren_tools::{ApprovalAnswer, Prepared, Registry};
use warren_types::ToolErrorCode;

#[test]
fn supervised_asks_and_nobody_answers() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("sam"); // supervised, auto_approve = [file_read]
    let reg = Registry::builtin();
    let ws = fx.ws("sam");
    fx.write(&ws.join("r.txt"), "read me");
    // Reads are auto-approved.
    assert_eq!(
        run(reg.invoke(
            "file_read",
            &json!({"path": "r.txt"}),
            &ctx,
            &ApprovalAnswer::no_one()
        ))
        .unwrap()["content"],
        "read me"
    );
    // A write needs approval: no one to ask, nothing written.
    let err = run(reg.invoke(
        "file_write",
        &json!({"path": "w.txt", "content": "x"}),
        &ctx,
        &ApprovalAnswer::no_one(),
    ))
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::NoApprover);
    assert!(err.to_string().contains("no one to ask"), "{err}");
    assert!(!ws.join("w.txt").exists());
    let err = run(reg.invoke(
        "file_write",
        &json!({"path": "w.txt", "content": "x"}),
        &ctx,
        &ApprovalAnswer::deny(Some("not now".into())),
    ))
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::ApprovalDenied);
    assert!(err.to_string().contains("not now"));
    assert!(!ws.join("w.txt").exists());
    // Approved: written.
    call(&ctx, "file_write", json!({"path": "w.txt", "content": "x"})).unwrap();
    assert!(ws.join("w.txt").exists());
    // Denials and no-one-to-ask did not spend the budget.
    assert_eq!(ctx.ledger.used("sam", SystemTime::now()).unwrap(), 1);
}

/// The gate's two steps: `prepare` decides once, and a permit that asks runs only approved.
#[test]
fn a_prepared_call_that_asks_runs_only_once_approved() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("sam"); // supervised: writes ask
    let reg = Registry::builtin();
    let ws = fx.ws("sam");
    let used = || ctx.ledger.used("sam", SystemTime::now()).unwrap();
    let args = json!({"path": "w.txt", "content": "x"});
    let Prepared::Ask { permit, reason } = reg.prepare("file_write", &args, &ctx) else {
        panic!("a supervised write asks");
    };
    assert_eq!(permit.needs_approval(), Some(reason.as_str()));
    assert_eq!(used(), 1, "prepare charges the budget");
    // Run without being approved: the gate denies it, nothing is written, the unit goes back.
    let err = run(permit.execute(&args, &ctx)).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::ApprovalDenied, "{err}");
    assert!(!ws.join("w.txt").exists());
    assert_eq!(used(), 0);
    // A permit dropped without running gives its unit back too.
    let Prepared::Ask { permit, .. } = reg.prepare("file_write", &args, &ctx) else {
        panic!("a supervised write asks");
    };
    assert_eq!(used(), 1);
    drop(permit);
    assert_eq!(used(), 0);
    // Approved: it runs and keeps its unit.
    let Prepared::Ask { permit, .. } = reg.prepare("file_write", &args, &ctx) else {
        panic!("a supervised write asks");
    };
    run(permit.approve().execute(&args, &ctx)).unwrap();
    assert!(ws.join("w.txt").exists());
    assert_eq!(used(), 1);
    // A read is allowed without a question and charges nothing.
    let read = json!({"path": "w.txt"});
    let Prepared::Allowed(permit) = reg.prepare("file_read", &read, &ctx) else {
        panic!("a read is auto-approved");
    };
    assert_eq!(run(permit.execute(&read, &ctx)).unwrap()["content"], "x");
    assert_eq!(used(), 1);
    // A failed check is told apart from a refusal: the call was not judged.
    match reg.prepare("file_write", &json!({"nope": 1}), &ctx) {
        Prepared::Denied { error, at_check } => {
            assert_eq!(error.code(), ToolErrorCode::InvalidArgument, "{error}");
            assert!(at_check);
        }
        other => panic!("{other:?}"),
    }
    match reg.prepare("no_such_tool", &json!({}), &ctx) {
        Prepared::Denied { error, at_check } => {
            assert_eq!(error.code(), ToolErrorCode::UnknownTool, "{error}");
            assert!(!at_check);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(used(), 1);
}

#[test]
fn readonly_refuses_side_effects() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("rita");
    for (tool, args) in [
        ("file_write", json!({"path": "w.txt", "content": "x"})),
        (
            "file_edit",
            json!({"path": "w.txt", "old_text": "a", "new_text": "b"}),
        ),
        ("shell", json!({"command": "ls"})),
    ] {
        let err = call(&ctx, tool, args).unwrap_err();
        assert_eq!(err.code(), ToolErrorCode::Readonly, "{tool}: {err}");
    }
    assert!(!fx.ws("rita").join("w.txt").exists());
}

#[test]
fn action_budget_sliding_window() {
    let fx = Fixture::new(FAMILY);
    let mut ctx = fx.ctx("quinn"); // max_actions_per_hour = 2
    let clock = Arc::new(ManualClock::new(
        SystemTime::UNIX_EPOCH + Duration::from_secs(10_000_000),
    ));
    ctx.clock = clock.clone();
    call(&ctx, "file_write", json!({"path": "1.txt", "content": "1"})).unwrap();
    // A failed action gives its unit back.
    let err = call(
        &ctx,
        "file_edit",
        json!({"path": "1.txt", "old_text": "zzz", "new_text": "y"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::EditNoMatch);
    call(&ctx, "file_write", json!({"path": "2.txt", "content": "2"})).unwrap();
    let err = call(&ctx, "file_write", json!({"path": "3.txt", "content": "3"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::BudgetExhausted);
    assert!(!fx.ws("quinn").join("3.txt").exists());
    // Reads do not count.
    call(&ctx, "file_read", json!({"path": "1.txt"})).unwrap();
    clock.advance(Duration::from_secs(3601));
    call(&ctx, "file_write", json!({"path": "3.txt", "content": "3"})).unwrap();

    let text = FAMILY.replace("max_actions_per_hour = 2", "max_actions_per_hour = 0");
    let fx = Fixture::new(&text);
    let ctx = fx.ctx("quinn");
    assert_eq!(
        call(&ctx, "file_write", json!({"path": "x", "content": "x"}))
            .unwrap_err()
            .code(),
        ToolErrorCode::BudgetExhausted
    );
    assert!(!fx.ws("quinn").join("x").exists());
}

#[test]
fn tool_lists_filter_calls_and_specs() {
    let text = FAMILY.replace(
        "block_high_risk_commands = true",
        "block_high_risk_commands = true\nexcluded_tools = [\"shell\"]",
    );
    let fx = Fixture::new(&text);
    let ctx = fx.ctx("alice");
    assert_eq!(
        call(&ctx, "shell", json!({"command": "ls"}))
            .unwrap_err()
            .code(),
        ToolErrorCode::ToolNotAllowed
    );
    let specs = Registry::builtin().specs_for(&ctx);
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(
        names,
        vec![
            "file_read",
            "file_write",
            "file_edit",
            "glob_search",
            "content_search",
            "git_operations"
        ]
    );
    for s in &specs {
        assert_eq!(s.parameters["type"], "object");
        assert!(s.parameters["required"].is_array(), "{}", s.name);
    }
}
