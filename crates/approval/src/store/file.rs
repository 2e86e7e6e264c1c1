//! The database file itself: where it is, who may read it, and what it must already hold.

use std::path::{Path, PathBuf};

use sqlx::sqlite::SqliteConnectOptions;

use crate::error::StoreError;

/// The approval database at `db` and the files SQLite and the store keep beside it (`-wal`,
/// `-shm`, `-journal`, `.lock`), absolute: what an agent's tools must neither read nor write.
pub fn database_files(db: &Path) -> Vec<PathBuf> {
    let db = std::path::absolute(db).unwrap_or_else(|_| db.to_path_buf());
    let beside = |suffix: &str| {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(suffix);
        db.with_file_name(name)
    };
    vec![
        db.clone(),
        beside("-wal"),
        beside("-shm"),
        beside("-journal"),
        beside(".lock"),
    ]
}

/// Makes sure `path` is a file tollgate may use as its approval database: a new one is
/// created empty, readable by its owner only (mode 0600, in a folder created 0700; SQLite gives
/// its `-wal` and `-shm` files the same mode); an existing one must be SQLite and hold the
/// approval tables or no table at all: another program's database is never migrated.
pub(super) async fn prepare_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |reason: String| StoreError::Open {
        path: path.to_path_buf(),
        reason,
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(fail(format!("cannot create it: {e}"))),
    }
    let is_empty = std::fs::metadata(path).is_ok_and(|m| m.len() == 0);
    if is_empty {
        return Ok(());
    }
    match tables(path).await.map_err(fail)? {
        Tables::None | Tables::Approval => Ok(()),
        Tables::Other(n) => Err(fail(format!(
            "it is another program's SQLite database ({n} tables, none of them tollgate's); \
             refusing to add tollgate's tables to it"
        ))),
    }
}

/// What an existing SQLite file holds.
enum Tables {
    None,
    Approval,
    Other(usize),
}

/// Reads the table names of an existing file through a read-only connection that changes
/// nothing (no journal mode, no schema).
async fn tables(path: &Path) -> Result<Tables, String> {
    use sqlx::ConnectOptions;
    let mut connection = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .create_if_missing(false)
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .fetch_all(&mut connection)
    .await
    .map_err(|e| e.to_string())?;
    Ok(if names.is_empty() {
        Tables::None
    } else if names.iter().any(|n| n == "confirmation_request") {
        Tables::Approval
    } else {
        Tables::Other(names.len())
    })
}

/// Creates the folder of `path` (0700) when missing; refuses a `path` that is a folder.
pub(super) fn prepare_folder(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::DirBuilderExt;
    let fail = |reason: String| StoreError::Open {
        path: path.to_path_buf(),
        reason,
    };
    if path.is_dir() {
        return Err(fail("it is a directory".into()));
    }
    if let Some(dir) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.exists())
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| fail(format!("cannot create its folder: {e}")))?;
    }
    Ok(())
}

/// The lock file beside `path`.
pub(super) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Takes the exclusive lock on `<db>.lock` (created when missing), waiting for another
/// process that holds it. The lock file is never the database itself: closing a descriptor of
/// the database would drop SQLite's own locks in this process.
pub(super) async fn migration_lock(
    path: &Path,
) -> Result<nix::fcntl::Flock<std::fs::File>, StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    let lock_path = lock_path(path);
    let fail = |reason: String| StoreError::Open {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|e| {
            fail(format!(
                "cannot open its lock file {}: {e}",
                lock_path.display()
            ))
        })?;
    let shown = lock_path.display().to_string();
    let locked = tokio::task::spawn_blocking(move || {
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, errno)| errno)
    })
    .await
    .map_err(|e| fail(format!("the lock task failed: {e}")))?;
    locked.map_err(|errno| fail(format!("cannot lock {shown}: {errno}")))
}
