//! `read_file` / `write_file`, confined to the workspace.
//!
//! Confinement is [cap-std]'s: paths resolve inside a directory handle, so `..`, absolute paths
//! and symbolic links that lead outside the workspace fail instead of escaping it.
//!
//! cap-std confines *names*; a hard link is another name for the same file (inode), and its
//! other names may be outside the workspace (`ln ~/.ssh/id_rsa key` in the workspace). Neither
//! tool uses a regular file with more than one link: the link count is read from the opened
//! descriptor (`fstat`), before any byte is read or written through that same descriptor, so a
//! name swapped between the check and the use cannot slip through.
//!
//! [cap-std]: https://docs.rs/cap-std

use cap_std::ambient_authority;
use std::io::{Read, Write};

use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};
use serde_json::{Value, json};
use tollgate_core::BoxFuture;

use super::{Tool, ToolEnv, ToolError, string_arg};
use crate::model::ToolSpec;

/// Largest file `read_file` returns.
pub const READ_CAP: u64 = 256 * 1024;

/// Reads a text file of the workspace.
#[derive(Debug, Clone, Copy)]
pub struct ReadFileTool;

/// Writes (creates or replaces) a text file of the workspace, creating parent directories.
#[derive(Debug, Clone, Copy)]
pub struct WriteFileTool;

fn workspace(env: &ToolEnv) -> Result<Dir, ToolError> {
    Dir::open_ambient_dir(&env.workspace, ambient_authority())
        .map_err(|e| ToolError::new(format!("cannot open the workspace: {e}")))
}

fn relative(path: &str) -> Result<&str, ToolError> {
    if path.trim().is_empty() {
        return Err(ToolError::new("`path` is empty"));
    }
    // `..` is refused before anything is touched: a write through `a/b/../../..` must not
    // leave `a/b` behind when cap-std refuses the escape.
    if std::path::Path::new(path)
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Err(ToolError::new(format!(
            "`{path}`: `..` is not allowed in workspace paths"
        )));
    }
    // Absolute paths are read as relative to the workspace root, the way a user means them.
    Ok(path.trim_start_matches('/'))
}

fn outside(path: &str, e: &std::io::Error) -> ToolError {
    ToolError::new(format!("cannot use `{path}` in the workspace: {e}"))
}

impl Tool for ReadFileTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file, by path relative to the workspace.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"]
            }),
        }
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let path = relative(string_arg(args, "path")?)?.to_owned();
            let env = env.clone();
            blocking(move || read_capped(&workspace(&env)?, &path)).await
        })
    }
}

impl Tool for WriteFileTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_file".into(),
            description: "Create or replace a text file, by path relative to the workspace.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"]
            }),
        }
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            // An edit's fields would make hooks see an edit (Claude Code's `Edit`, `MultiEdit`)
            // where the whole file is replaced: refused, so hooks see what is written.
            if let Some(key) = EDIT_FIELDS.iter().find(|k| args.get(**k).is_some()) {
                return Err(ToolError::new(format!(
                    "`{key}` is not supported: write_file replaces the whole file; send its full \
                     `content` (and no `old_string`, `new_string`, `replace_all` or `edits`)"
                )));
            }
            let path = relative(string_arg(args, "path")?)?.to_owned();
            let content = string_arg(args, "content")?.to_owned();
            let env = env.clone();
            blocking(move || write_regular(&workspace(&env)?, &path, &content)).await
        })
    }
}

/// The arguments of an edit, which `write_file` does not make.
const EDIT_FIELDS: [&str; 4] = ["old_string", "new_string", "replace_all", "edits"];

/// O_NONBLOCK: opening a FIFO must not wait for a writer (or a reader).
fn nonblocking() -> i32 {
    nix::fcntl::OFlag::O_NONBLOCK.bits()
}

/// The metadata of an opened file (`fstat` on its descriptor), refused unless it is a regular
/// file with a single link. FIFOs and devices would block the tool or never end; a file with
/// several links may also be named outside the workspace.
fn own_regular_file(file: &File, path: &str, not_regular: &str) -> Result<Metadata, ToolError> {
    let meta = file.metadata().map_err(|e| outside(path, &e))?;
    if !meta.is_file() {
        return Err(ToolError::new(format!("`{path}` {not_regular}")));
    }
    if meta.nlink() > 1 {
        return Err(ToolError::new(format!(
            "`{path}` has {} hard links, and another name of the same file may be outside \
             the workspace; the file tools use only files with a single link (copy it to get \
             a file of its own)",
            meta.nlink()
        )));
    }
    Ok(meta)
}

/// Reads a regular file of at most [`READ_CAP`] bytes; the read itself is bounded too (a file
/// that grows while it is read, or a device, never fills memory).
fn read_capped(dir: &Dir, path: &str) -> Result<Value, ToolError> {
    let file = dir
        .open_with(
            path,
            OpenOptions::new().read(true).custom_flags(nonblocking()),
        )
        .map_err(|e| outside(path, &e))?;
    let meta = own_regular_file(&file, path, "is not a regular file")?;
    if meta.len() > READ_CAP {
        return Err(ToolError::new(format!(
            "`{path}` has {} bytes; read_file returns at most {READ_CAP}",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(READ_CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| outside(path, &e))?;
    if bytes.len() as u64 > READ_CAP {
        return Err(ToolError::new(format!(
            "`{path}` grew past {READ_CAP} bytes while it was read"
        )));
    }
    String::from_utf8(bytes)
        .map(Value::String)
        .map_err(|_| ToolError::new(format!("`{path}` is not UTF-8 text")))
}

/// Creates or replaces a regular file (never a FIFO or device, never a file with several
/// links), with its parent directories. The file is opened without truncation and checked on
/// its descriptor; only then is it truncated and written, through the same descriptor.
fn write_regular(dir: &Dir, path: &str, content: &str) -> Result<Value, ToolError> {
    if path.ends_with('/') || path.is_empty() {
        // A directory name: refused before its parents are created.
        return Err(ToolError::new(format!(
            "`{path}` names a directory, not a file"
        )));
    }
    if let Some(parent) = std::path::Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        dir.create_dir_all(parent).map_err(|e| outside(path, &e))?;
    }
    let mut file = dir
        .open_with(
            path,
            OpenOptions::new()
                .write(true)
                .create(true)
                .custom_flags(nonblocking()),
        )
        .map_err(|e| outside(path, &e))?;
    own_regular_file(&file, path, "exists and is not a regular file")?;
    file.set_len(0)
        .and_then(|()| file.write_all(content.as_bytes()))
        .map_err(|e| outside(path, &e))?;
    Ok(json!({"path": path, "bytes": content.len()}))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(format!("the file task failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn env(dir: &std::path::Path) -> ToolEnv {
        ToolEnv {
            workspace: dir.to_owned(),
            database: None,
            tool_timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn files_round_trip_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        let wrote = WriteFileTool
            .call(&json!({"path": "notes/a.txt", "content": "hi"}), &env)
            .await
            .unwrap();
        assert_eq!(wrote, json!({"path": "notes/a.txt", "bytes": 2}));
        let read = ReadFileTool
            .call(&json!({"path": "/notes/a.txt"}), &env)
            .await
            .unwrap();
        assert_eq!(read, json!("hi"));
    }

    #[tokio::test]
    async fn escapes_fail() {
        let outer = tempfile::tempdir().unwrap();
        let inner = outer.path().join("ws");
        std::fs::create_dir(&inner).unwrap();
        std::fs::write(outer.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outer.path().join("secret"), inner.join("link")).unwrap();
        std::os::unix::fs::symlink(outer.path(), inner.join("up")).unwrap();
        let env = env(&inner);
        for path in ["../secret", "link", "up/secret", "a/../../secret"] {
            let read = ReadFileTool.call(&json!({"path": path}), &env).await;
            assert!(read.is_err(), "{path} escaped: {read:?}");
        }
        for path in ["../evil", "up/evil", "link"] {
            let wrote = WriteFileTool
                .call(&json!({"path": path, "content": "x"}), &env)
                .await;
            assert!(wrote.is_err(), "{path} escaped: {wrote:?}");
        }
        assert!(!outer.path().join("evil").exists());
        // A refused write leaves nothing behind.
        let wrote = WriteFileTool
            .call(
                &json!({"path": "a/b/../../../escape.txt", "content": "x"}),
                &env,
            )
            .await
            .unwrap_err();
        assert!(wrote.0.contains("`..`"), "{wrote}");
        assert!(!inner.join("a").exists());
        let wrote = WriteFileTool
            .call(&json!({"path": "m/n/", "content": "x"}), &env)
            .await
            .unwrap_err();
        assert!(wrote.0.contains("directory"), "{wrote}");
        assert!(!inner.join("m").exists());
        // Special files in the workspace never block the tool.
        nix::unistd::mkfifo(&inner.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::create_dir(inner.join("dir")).unwrap();
        for path in ["pipe", "dir"] {
            let read = ReadFileTool
                .call(&json!({"path": path}), &env)
                .await
                .unwrap_err();
            assert!(read.0.contains("not a regular file"), "{path}: {read}");
            // A FIFO without a reader fails to open (ENXIO); a directory is not a regular file.
            let wrote = WriteFileTool
                .call(&json!({"path": path, "content": "x"}), &env)
                .await;
            assert!(wrote.is_err(), "{path}: {wrote:?}");
        }
        assert_eq!(
            std::fs::read_to_string(outer.path().join("secret")).unwrap(),
            "s"
        );
    }

    #[tokio::test]
    async fn regression_write_file_wrote_through_a_hard_link_to_a_file_outside() {
        let outer = tempfile::tempdir().unwrap();
        let inner = outer.path().join("ws");
        std::fs::create_dir(&inner).unwrap();
        let secret = outer.path().join("id_rsa");
        std::fs::write(&secret, "SECRET KEY").unwrap();
        std::fs::hard_link(&secret, inner.join("key")).unwrap();
        let env = env(&inner);
        let wrote = WriteFileTool
            .call(&json!({"path": "key", "content": "overwritten"}), &env)
            .await
            .unwrap_err();
        assert!(wrote.0.contains("2 hard links"), "{wrote}");
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "SECRET KEY");
        // Reading it would hand the outside file to the model: refused the same way.
        let read = ReadFileTool
            .call(&json!({"path": "/key"}), &env)
            .await
            .unwrap_err();
        assert!(read.0.contains("hard links"), "{read}");
        assert!(!read.0.contains("SECRET"), "{read}");
        // Once the outside name is gone the file is the workspace's own again.
        std::fs::remove_file(&secret).unwrap();
        WriteFileTool
            .call(&json!({"path": "key", "content": "mine"}), &env)
            .await
            .unwrap();
        let read = ReadFileTool
            .call(&json!({"path": "key"}), &env)
            .await
            .unwrap();
        assert_eq!(read, json!("mine"));
    }

    #[tokio::test]
    async fn write_file_refuses_an_edits_fields_rather_than_replace_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello world\n").unwrap();
        let env = env(dir.path());
        for args in [
            json!({"path": "a.txt", "content": "HELLO", "old_string": "hello"}),
            json!({"path": "a.txt", "content": "x", "edits": [{"old_string": "a", "new_string": "b"}]}),
            json!({"path": "a.txt", "content": "x", "replace_all": true}),
        ] {
            let refused = WriteFileTool.call(&args, &env).await.unwrap_err();
            assert!(refused.0.contains("is not supported"), "{refused}");
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "hello world\n"
        );
    }
}
