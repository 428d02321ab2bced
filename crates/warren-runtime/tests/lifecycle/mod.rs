//! The lifecycle service against real files and real SQLite: rename, delete with archive,
//! restore, blockers, quiescing, and interrupted runs resumed after every journaled step.

mod delete;
mod faults;
mod fixture;
mod markdown;
mod pending;
mod rename;
mod windows;
