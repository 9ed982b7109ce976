//! Engines over a real SQLite file, for the store tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use smarter_compact::config::Config;
use smarter_compact::store::SqlStore;
use smarter_compact::Engine;

use super::native_sql::NativeSql;

/// A fresh database path in a fresh directory under the build's scratch folder (`target/tmp`,
/// inside the checkout: a test run leaves nothing in the system's temporary directory).
pub fn temp_db(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "sc-store-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("session.db")
}

/// An engine over the SQLite file at `path` with a fixed threshold.
pub fn sql_engine(path: &std::path::Path, trim_at: u32) -> Engine<SqlStore<NativeSql>> {
    let config = Config::resolve(
        &Default::default(),
        None,
        &json!({ "trimAtTokens": trim_at }),
    );
    let store = SqlStore::open(NativeSql::open(path)).expect("store");
    Engine::open(store, config).expect("engine")
}
