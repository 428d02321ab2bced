//! Streaming export of one agent's rows, page by page, so an archive never needs the whole
//! agent in memory.

use std::sync::Arc;

use futures::stream::{self, Stream, StreamExt};
use uuid::Uuid;

use crate::error::MemoryError;
use crate::traits::MemoryStore;
use crate::types::{ExportCursor, MemoryEntry};

/// Rows per page of [`export_agent`] (a round trip each where the backend pages).
pub const EXPORT_PAGE: usize = 1000;

/// Every row of `agent_id`, in `(created_at, id)` order, as a stream of pages' rows (from the
/// backend's [`MemoryStore::export_stream`] where it has one). An error ends the stream after
/// being yielded once.
pub fn export_agent(
    store: Arc<dyn MemoryStore>,
    agent_id: Uuid,
) -> impl Stream<Item = Result<MemoryEntry, MemoryError>> + Send {
    match store.export_stream(agent_id) {
        Some(pages) => pages
            .flat_map(|page| match page {
                Ok(rows) => stream::iter(rows.into_iter().map(Ok::<_, MemoryError>)).boxed(),
                Err(e) => stream::iter(vec![Err(e)]).boxed(),
            })
            .boxed(),
        None => paged(store, agent_id).boxed(),
    }
}

/// [`export_agent`] page by page with [`MemoryStore::export_page`], each page after the last
/// row of the one before.
fn paged(
    store: Arc<dyn MemoryStore>,
    agent_id: Uuid,
) -> impl Stream<Item = Result<MemoryEntry, MemoryError>> + Send {
    struct State {
        store: Arc<dyn MemoryStore>,
        cursor: Option<ExportCursor>,
        buffer: std::vec::IntoIter<MemoryEntry>,
        done: bool,
    }
    let init = State {
        store,
        cursor: None,
        buffer: Vec::new().into_iter(),
        done: false,
    };
    stream::unfold(init, move |mut st| async move {
        loop {
            if let Some(row) = st.buffer.next() {
                st.cursor = Some(ExportCursor::after(&row));
                return Some((Ok(row), st));
            }
            if st.done {
                return None;
            }
            match st
                .store
                .export_page(agent_id, st.cursor.as_ref(), EXPORT_PAGE)
                .await
            {
                Ok(page) => {
                    st.done = page.len() < EXPORT_PAGE;
                    st.buffer = page.into_iter();
                }
                Err(e) => {
                    st.done = true;
                    st.buffer = Vec::new().into_iter();
                    return Some((Err(e), st));
                }
            }
        }
    })
}
