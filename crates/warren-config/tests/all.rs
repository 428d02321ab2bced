//! Integration tests of the config layer against real files.

mod edit;
mod refs;
mod tidy;
mod validation;
