//! BM25 over the whole allowlist of a recall, computed inside each agent's index.
//!
//! FTS5's own `bm25()` takes its statistics (how many rows an index holds, how many of them
//! hold a word, their average length) from the one table it ranks. With one index per agent
//! that would make a word's weight depend on which agent's rows it is in: a word found in half
//! of a small agent's rows weighs almost nothing there (FTS5 floors such a weight), so that
//! agent's matches would rank below a large peer's whatever they say. A recall therefore first
//! reads the statistics of every index it asks ([`scope_stats`]) and ranks with
//! `warren_bm25(<index>, rows, average length, docs with word 1, ...)`, an FTS5 auxiliary
//! function registered on each reading connection: FTS5's formula (k1 = 1.2, b = 0.75, hits
//! counted in the `body` column, lengths over all columns, rank = minus the score), with those
//! allowlist-wide figures. For a scope of one agent it equals FTS5's `bm25(<index>, 1.0, 0.0)`.
//!
//! `warren_df(<index>, i)` answers how many rows of the index hold phrase `i` of the MATCH
//! expression (FTS5 walks the phrase's doclist once, as its own `bm25()` does on first use).

use std::os::raw::{c_int, c_void};
use std::ptr;

use rusqlite::ffi;

/// The statistics a recall ranks with: every index it asks, added up.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeStats {
    /// Rows of the indexes.
    pub rows: f64,
    /// Tokens of all their columns.
    pub tokens: f64,
    /// For each word of the query, in order, the rows holding it.
    pub docs: Vec<f64>,
}

impl ScopeStats {
    /// The average length of a row, in tokens.
    pub fn avgdl(&self) -> f64 {
        if self.rows > 0.0 {
            self.tokens / self.rows
        } else {
            0.0
        }
    }

    /// Adds another part of the scope.
    pub fn add(&mut self, other: &ScopeStats) {
        self.rows += other.rows;
        self.tokens += other.tokens;
        for (d, o) in self.docs.iter_mut().zip(&other.docs) {
            *d += o;
        }
    }
}

/// FTS5's BM25 parameters.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The weight of a word found in `df` of `rows` rows, as FTS5 computes it (floored at 1e-6 when
/// the word is in half of the rows or more).
pub fn idf(rows: f64, df: f64) -> f64 {
    let idf = ((rows - df + 0.5) / (df + 0.5)).ln();
    if idf <= 0.0 {
        1e-6
    } else {
        idf
    }
}

/// Registers `warren_bm25` and `warren_df` on a connection.
///
/// # Safety
/// `db` must be an open connection handle, not used by another thread during the call.
pub unsafe fn register(db: *mut ffi::sqlite3) -> Result<(), String> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    // SAFETY: the documented way to obtain FTS5's API pointer: bind a pointer of type
    // "fts5_api_ptr" to `SELECT fts5(?1)` and step it once.
    unsafe {
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(format!("preparing `SELECT fts5(?1)` failed ({rc})"));
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        if api.is_null() {
            return Err("this SQLite has no FTS5".into());
        }
        let Some(create) = (*api).xCreateFunction else {
            return Err("FTS5 offers no xCreateFunction".into());
        };
        let functions: [(&std::ffi::CStr, ffi::fts5_extension_function); 2] =
            [(c"warren_bm25", Some(bm25)), (c"warren_df", Some(df))];
        for (name, f) in functions {
            let rc = create(api, name.as_ptr(), ptr::null_mut(), f, None);
            if rc != ffi::SQLITE_OK {
                return Err(format!("registering {name:?} failed ({rc})"));
            }
        }
    }
    Ok(())
}

unsafe fn error(ctx: *mut ffi::sqlite3_context, text: &std::ffi::CStr) {
    // SAFETY: `ctx` is the context SQLite passed to the function.
    unsafe { ffi::sqlite3_result_error(ctx, text.as_ptr(), -1) };
}

/// `warren_bm25(tbl, rows, avgdl, df_0, df_1, ...)`: minus the BM25 score of the current row
/// over the `body` column, phrase `i` weighted by `idf(rows, df_i)`; phrases without a `df`
/// argument (the scope tokens) weigh nothing.
unsafe extern "C" fn bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: SQLite passes a valid API table, context and `n` argument values.
    unsafe {
        let api = &*api;
        let (Some(inst_count), Some(inst), Some(column_size)) =
            (api.xInstCount, api.xInst, api.xColumnSize)
        else {
            return error(ctx, c"warren_bm25: FTS5 API incomplete");
        };
        if n < 2 {
            return error(
                ctx,
                c"warren_bm25: expected rows, average length and counts",
            );
        }
        let arg = |i: c_int| ffi::sqlite3_value_double(*args.add(i as usize));
        let rows = arg(0);
        let avgdl = arg(1);
        let weighted = (n - 2) as usize;
        // Hits of each weighted phrase in column 0 (`body`); a query has at most 32 words.
        let mut tf = [0f64; 64];
        let mut hits: c_int = 0;
        if inst_count(fts, &mut hits) != ffi::SQLITE_OK {
            return error(ctx, c"warren_bm25: xInstCount failed");
        }
        for i in 0..hits {
            let (mut phrase, mut col, mut off) = (0, 0, 0);
            if inst(fts, i, &mut phrase, &mut col, &mut off) != ffi::SQLITE_OK {
                return error(ctx, c"warren_bm25: xInst failed");
            }
            let p = phrase as usize;
            if col == 0 && p < weighted && p < tf.len() {
                tf[p] += 1.0;
            }
        }
        // The row's length over all columns, as FTS5's `bm25()` takes it.
        let mut dl: c_int = 0;
        if column_size(fts, -1, &mut dl) != ffi::SQLITE_OK {
            return error(ctx, c"warren_bm25: xColumnSize failed");
        }
        let norm = if avgdl > 0.0 {
            K1 * (1.0 - B + B * f64::from(dl) / avgdl)
        } else {
            K1
        };
        let mut score = 0.0;
        for (p, &t) in tf.iter().enumerate().take(weighted) {
            if t > 0.0 {
                let df = arg(2 + p as c_int);
                score += idf(rows, df) * (t * (K1 + 1.0)) / (t + norm);
            }
        }
        ffi::sqlite3_result_double(ctx, -score);
    }
}

/// Counts the rows `xQueryPhrase` visits.
unsafe extern "C" fn count_row(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the `i64` counter `df` passed to `xQueryPhrase`.
    unsafe { *user.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

/// `warren_df(tbl, i)`: how many rows of the index hold phrase `i` of the MATCH expression.
unsafe extern "C" fn df(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: SQLite passes a valid API table, context and `n` argument values.
    unsafe {
        let api = &*api;
        let (Some(phrase_count), Some(query_phrase)) = (api.xPhraseCount, api.xQueryPhrase) else {
            return error(ctx, c"warren_df: FTS5 API incomplete");
        };
        if n != 1 {
            return error(ctx, c"warren_df: expected a phrase number");
        }
        let i = ffi::sqlite3_value_int(*args);
        if i < 0 || i >= phrase_count(fts) {
            return error(ctx, c"warren_df: no such phrase");
        }
        let mut count: i64 = 0;
        let rc = query_phrase(
            fts,
            i,
            (&mut count as *mut i64).cast::<c_void>(),
            Some(count_row),
        );
        if rc != ffi::SQLITE_OK {
            return error(ctx, c"warren_df: xQueryPhrase failed");
        }
        ffi::sqlite3_result_int64(ctx, count);
    }
}

/// FTS5's averages record (rowid 1 of `<index>_data`): a varint row count, then one varint
/// per column with its total token count (empty while the index is empty). Returns (rows,
/// tokens of all columns), the figures FTS5's `bm25()` takes its average length from.
pub fn decode_averages(block: &[u8]) -> Option<(i64, i64)> {
    if block.is_empty() {
        return Some((0, 0));
    }
    let (rows, mut at) = varint(block)?;
    let mut tokens: u64 = 0;
    while at < block.len() {
        let (v, used) = varint(block.get(at..)?)?;
        tokens = tokens.checked_add(v)?;
        at += used;
    }
    Some((i64::try_from(rows).ok()?, i64::try_from(tokens).ok()?))
}

/// SQLite's varint: big-endian groups of 7 bits, the high bit set on all but the last; a ninth
/// byte carries 8 bits.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let byte = *b.get(i)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_averages_decode() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81]), None);
        assert_eq!(
            decode_averages(&[0x81, 0x00, 0x83, 0x01, 0x02]),
            Some((128, 387))
        );
        assert_eq!(decode_averages(&[]), Some((0, 0)));
        assert_eq!(decode_averages(&[0x03]), Some((3, 0)));
        assert_eq!(decode_averages(&[0x83]), None);
    }

    #[test]
    fn idf_is_floored_like_fts5() {
        assert!((idf(100.0, 1.0) - (99.5f64 / 1.5).ln()).abs() < 1e-12);
        assert_eq!(idf(2.0, 1.0), 1e-6);
        assert_eq!(idf(10.0, 9.0), 1e-6);
    }
}
