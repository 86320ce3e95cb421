//! `snapshot save -o PATH` renames a new file over its target, so it writes only to
//! a regular file (or a symlink to one: the link is replaced, its target untouched)
//! or a new path. A device node, a FIFO, a socket, a directory, a symlink to any of
//! them, or anything in /dev or /proc is refused with a clear error, and left as it
//! was; `-o -` is stdout.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DEMO: &str = "examples/demo-cluster.yaml";

fn save(output: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .args(["snapshot", "save", "--from", DEMO, "-o"])
        .arg(output)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs")
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedscope-save-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn assert_refused(target: &Path, what: &str) {
    let out = save(target);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}: {err}", target.display());
    assert!(
        err.contains(&format!("it is {what}")) && err.contains("regular file or a new path"),
        "{}: {err}",
        target.display()
    );
}

#[test]
fn special_files_are_refused_and_left_alone() {
    use std::os::unix::fs::{FileTypeExt, symlink};
    let d = dir("special");
    // A character device, directly and through a symlink chain (/dev/stdout).
    assert_refused(Path::new("/dev/null"), "in /dev");
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let to_null = d.join("to-null.yaml");
    symlink("/dev/null", &to_null).unwrap();
    assert_refused(&to_null, "a symlink to a character device");
    assert!(
        std::fs::symlink_metadata(&to_null)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_refused(Path::new("/dev/stdout"), "in /dev");
    assert_refused(Path::new("/proc/self/fd/1"), "in /proc");
    let to_stdout = d.join("to-stdout.yaml");
    symlink("/proc/self/fd/1", &to_stdout).unwrap();
    let out = save(&to_stdout);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        std::fs::symlink_metadata(&to_stdout)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A FIFO (no reader: opening it would block forever).
    let fifo = d.join("fifo.yaml");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    assert_refused(&fifo, "a FIFO");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A socket.
    let sock = d.join("sock.yaml");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    assert_refused(&sock, "a socket");
    // A directory, directly and through a symlink.
    let sub = d.join("sub.yaml");
    std::fs::create_dir(&sub).unwrap();
    assert_refused(&sub, "a directory");
    let to_sub = d.join("to-sub.yaml");
    symlink(&sub, &to_sub).unwrap();
    assert_refused(&to_sub, "a symlink to a directory");
    assert!(std::fs::read_dir(&sub).unwrap().next().is_none());
}

#[test]
fn regular_files_new_paths_and_stdout_are_written() {
    use std::os::unix::fs::symlink;
    let d = dir("ok");
    // A new path, then the same path again (a regular file, replaced).
    let file = d.join("snap.yaml");
    for _ in 0..2 {
        let out = save(&file);
        assert!(out.status.success(), "{out:?}");
        assert!(
            std::fs::read_to_string(&file)
                .unwrap()
                .contains("kind: Node")
        );
    }
    // A symlink to a regular file: the link is replaced, its target untouched.
    let target = d.join("target.yaml");
    std::fs::write(&target, "untouched").unwrap();
    let link = d.join("link.yaml");
    symlink(&target, &link).unwrap();
    assert!(save(&link).status.success());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_file()
    );
    // A dangling symlink: a new file in its place.
    let dangling = d.join("dangling.yaml");
    symlink(d.join("missing"), &dangling).unwrap();
    assert!(save(&dangling).status.success());
    assert!(!d.join("missing").exists());
    // `-o -`: stdout.
    let out = save(Path::new("-"));
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("kind: Node"));
}
