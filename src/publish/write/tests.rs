use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

fn file(rel: &str, text: &str) -> OutFile {
    OutFile { rel: rel.into(), data: OutData::Bytes(text.as_bytes().to_vec()) }
}

fn build(out: &Path, sources: &[&Path], files: &[OutFile]) -> Result<WriteStats> {
    OutputDir::claim(out, sources)?.write(files, &mut Stamps::default(), None)
}

#[test]
fn writes_skips_unchanged_and_removes_stale() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let s = build(&out, &[], &[file("a.html", "A"), file("g/b.html", "B")]).unwrap();
    assert_eq!(s, WriteStats { written: 2, unchanged: 0, removed: 0 });
    let s = build(&out, &[], &[file("a.html", "A2")]).unwrap();
    assert_eq!(s, WriteStats { written: 1, unchanged: 0, removed: 1 });
    assert_eq!(std::fs::read_to_string(out.join("a.html")).unwrap(), "A2");
    assert!(!out.join("g").exists());
    let s = build(&out, &[], &[file("a.html", "A2")]).unwrap();
    assert_eq!(s.unchanged, 1);
}

#[cfg(unix)]
#[test]
fn written_files_get_the_mode_of_any_new_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::File::create(&plain).unwrap();
    let out = dir.path().join("site");
    build(&out, &[], &[file("a.html", "A"), file("g/b.html", "B")]).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&out.join("a.html")), mode(&plain));
    assert_eq!(mode(&out.join("g/b.html")), mode(&plain));
    // Readable by others under the usual umask (022): what a web server needs.
    assert_ne!(mode(&plain) & 0o004, 0, "this test needs a umask that lets others read");
}

#[test]
fn known_files_as_left_are_not_compared_and_changed_ones_are() {
    let dir = tempfile::tempdir().unwrap();
    let out = OutputDir::claim(&dir.path().join("site"), &[]).unwrap();
    let known = |text: &str, digest| {
        vec![OutFile {
            rel: "a.html".into(),
            data: OutData::Known { bytes: Arc::new(text.to_string()), digest, page: None },
        }]
    };
    let mut stamps = Stamps::default();
    assert_eq!(out.write(&known("one", 1), &mut stamps, None).unwrap().written, 1);
    assert_eq!(out.write(&known("one", 1), &mut stamps, None).unwrap().unchanged, 1);
    // Someone else rewrote the file (another size): it is compared, found different, written back.
    std::fs::write(out.root().join("a.html"), "edited by hand").unwrap();
    assert_eq!(out.write(&known("one", 1), &mut stamps, None).unwrap().written, 1);
    assert_eq!(std::fs::read_to_string(out.root().join("a.html")).unwrap(), "one");
    // Another digest: compared and written.
    assert_eq!(out.write(&known("two", 2), &mut stamps, None).unwrap().written, 1);
    assert_eq!(std::fs::read_to_string(out.root().join("a.html")).unwrap(), "two");
}

#[test]
fn copies_stream_and_compare_across_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let src = dir.path().join("big.bin");
    let mut data: Vec<u8> = (0..3 * CHUNK + 17).map(|i| (i % 251) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    let copy = || vec![OutFile { rel: "a/big.bin".into(), data: OutData::Copy(src.clone()) }];
    assert_eq!(build(&out, &[], &copy()).unwrap().written, 1);
    assert_eq!(std::fs::read(out.join("a/big.bin")).unwrap(), data);
    assert_eq!(build(&out, &[], &copy()).unwrap().unchanged, 1);
    // One byte changed in the last chunk, same length: rewritten.
    data[3 * CHUNK + 3] ^= 1;
    std::fs::write(&src, &data).unwrap();
    assert_eq!(build(&out, &[], &copy()).unwrap().written, 1);
    assert_eq!(std::fs::read(out.join("a/big.bin")).unwrap(), data);
    // Exactly one chunk long.
    std::fs::write(&src, vec![7u8; CHUNK]).unwrap();
    assert_eq!(build(&out, &[], &copy()).unwrap().written, 1);
    assert_eq!(build(&out, &[], &copy()).unwrap().unchanged, 1);
}

#[test]
fn refuses_foreign_folders_and_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious.txt"), "keep").unwrap();
    let e = OutputDir::claim(dir.path(), &[]).unwrap_err().to_string();
    assert!(e.contains(MARKER), "{e}");
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    let e = OutputDir::claim(&docs.join("site"), &[&docs]).unwrap_err().to_string();
    assert!(e.contains("is inside the source folder"), "{e}");
    assert!(OutputDir::claim(dir.path(), &[&docs]).unwrap_err().to_string().contains("holds the source folder"));
    assert!(OutputDir::claim(&dir.path().join("new"), &[&docs]).is_ok());
    assert!(OutputDir::claim(Path::new("/"), &[]).unwrap_err().to_string().contains("root of the file system"));
}

/// The reported cases: a missing folder followed by `..` leads to a source
/// folder or a home folder, which must be refused before anything is made.
#[test]
fn dot_dot_through_a_missing_folder_is_resolved_before_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("guide.md"), "# Guide").unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".bashrc"), "rc").unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "key").unwrap();

    let out = dir.path().join("site/../docs");
    let e = build(&out, &[&docs], &[file("index.html", "x")]).unwrap_err().to_string();
    assert!(e.contains("site/../docs") && e.contains("is the source folder"), "{e}");
    let out = dir.path().join("new/../home");
    let e = build(&out, &[&docs], &[file("index.html", "x")]).unwrap_err().to_string();
    assert!(e.contains("new/../home") && e.contains(MARKER), "{e}");
    assert_eq!(std::fs::read_to_string(docs.join("guide.md")).unwrap(), "# Guide");
    assert_eq!(std::fs::read_to_string(home.join(".ssh/id_ed25519")).unwrap(), "key");
    assert!(!dir.path().join("site").exists() && !dir.path().join("new").exists(), "nothing is made when refused");
}

#[cfg(unix)]
#[test]
fn a_link_inside_the_site_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("style.css"), "mine").unwrap();
    let out = dir.path().join("site");
    build(&out, &[], &[file("static/style.css", "site css"), file("index.html", "i")]).unwrap();
    std::fs::remove_dir_all(out.join("static")).unwrap();
    std::os::unix::fs::symlink(&outside, out.join("static")).unwrap();
    let e = build(&out, &[], &[file("static/style.css", "site css"), file("index.html", "i")]).unwrap_err();
    assert!(e.to_string().contains("static") && e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(outside.join("style.css")).unwrap(), "mine");
    // A link where a file goes is refused too, and a stale listed path that
    // became a link is left alone rather than removed.
    std::fs::remove_file(out.join("static")).unwrap();
    std::fs::remove_file(out.join("index.html")).unwrap();
    std::os::unix::fs::symlink(outside.join("style.css"), out.join("index.html")).unwrap();
    let e = build(&out, &[], &[file("index.html", "i")]).unwrap_err().to_string();
    assert!(e.contains("index.html") && e.contains("symbolic link"), "{e}");
    build(&out, &[], &[file("other.html", "o")]).unwrap();
    assert!(std::fs::symlink_metadata(out.join("index.html")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(outside.join("style.css")).unwrap(), "mine");
}

#[test]
fn files_it_did_not_write_are_neither_replaced_nor_removed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    build(&out, &[], &[file("index.html", "i")]).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("guide.html"), "mine too").unwrap();
    let s = build(&out, &[], &[file("index.html", "i2")]).unwrap();
    assert_eq!(s.removed, 0);
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    let e = build(&out, &[], &[file("index.html", "i"), file("guide.html", "g")]).unwrap_err().to_string();
    assert!(e.contains("guide.html") && e.contains("not written by"), "{e}");
    assert_eq!(std::fs::read_to_string(out.join("guide.html")).unwrap(), "mine too");
}

#[test]
fn a_site_from_before_manifests_is_adopted_but_nothing_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join(MARKER), "Built by `vaultbench publish`; this folder is replaced on every build.\n")
        .unwrap();
    std::fs::write(out.join("index.html"), "old").unwrap();
    std::fs::write(out.join("gone.html"), "old").unwrap();
    let s = build(&out, &[], &[file("index.html", "new")]).unwrap();
    assert_eq!(s, WriteStats { written: 1, unchanged: 0, removed: 0 });
    assert!(out.join("gone.html").exists());
    // From now on the folder has a manifest: what this build wrote may go.
    let s = build(&out, &[], &[file("other.html", "o")]).unwrap();
    assert_eq!(s.removed, 1);
    assert!(!out.join("index.html").exists() && out.join("gone.html").exists());
}

/// The page records are a cache: records that do not read (edited by hand,
/// from a broken disk) are none, and the list of files still holds, so a
/// stale file is still removed.
#[test]
fn page_records_that_do_not_read_cost_nothing_but_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    build(&out, &[], &[file("a.html", "A"), file("b.html", "B")]).unwrap();
    for broken in [
        r#""program": 7, "pages": {"a.html": {"source": "x"}}"#,
        r#""program": "vaultbench", "pages": [1, 2]"#,
        r#""pages": {"a.html": {"source": 1, "digest": 2, "size": 1, "modified": "yesterday", "inode": -1}}"#,
    ] {
        let manifest = format!(r#"{{"note": "n", "files": ["a.html", "b.html"], {broken}}}"#);
        std::fs::write(out.join(MARKER), &manifest).unwrap();
        let dir = OutputDir::claim(&out, &[]).unwrap();
        let (listed, records) = dir.read_manifest().unwrap();
        assert!(matches!(&listed, Manifest::Listed(files) if files.len() == 2), "{manifest}: {listed:?}");
        assert!(records.is_empty(), "{manifest}");
    }
    let s = build(&out, &[], &[file("a.html", "A")]).unwrap();
    assert_eq!(s.removed, 1);
    assert!(!out.join("b.html").exists());
}

#[test]
fn paths_that_leave_the_folder_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    for rel in ["../x.html", "/etc/x", "a//b", "a/./b", "", MARKER] {
        let e = build(&out, &[], &[file(rel, "x")]).unwrap_err().to_string();
        assert!(e.contains("not a plain path"), "{rel}: {e}");
    }
    assert!(!dir.path().join("x.html").exists());
}

#[test]
fn a_watched_folder_refuses_other_builds_and_two_builds_serialize() {
    let dir = tempfile::tempdir().unwrap();
    let out = OutputDir::claim(&dir.path().join("site"), &[]).unwrap();
    let owner = out.own().unwrap();
    out.write(&[file("a.html", "watch")], &mut Stamps::default(), Some(&owner)).unwrap();
    let e = build(&dir.path().join("site"), &[], &[file("a.html", "one-off")]).unwrap_err().to_string();
    assert!(e.contains("publish --watch") && e.contains(&std::process::id().to_string()), "{e}");
    assert!(out.own().is_err(), "a second preview of the same folder is refused");
    drop(owner);
    build(&dir.path().join("site"), &[], &[file("a.html", "one-off")]).unwrap();

    // Builds racing into one folder, each with its own files: every one
    // succeeds and the folder ends as one of them left it, whole.
    let site = dir.path().join("race");
    let sets: Vec<Vec<OutFile>> = (0..5)
        .map(|i| (0..40).map(|j| file(&format!("d{}/p{j}.html", (i + j) % 5), &format!("{i}"))).collect())
        .collect();
    std::thread::scope(|scope| {
        for files in &sets {
            let site = &site;
            scope.spawn(move || build(site, &[], files).unwrap());
        }
    });
    let manifest = OutputDir::claim(&site, &[]).unwrap().read_manifest().unwrap().0;
    let Manifest::Listed(listed) = manifest else { panic!("no manifest") };
    let winner = sets.iter().find(|s| s.iter().all(|f| listed.contains(&f.rel)) && s.len() == listed.len()).unwrap();
    let text = |f: &OutFile| match &f.data {
        OutData::Bytes(b) => String::from_utf8(b.clone()).unwrap(),
        _ => unreachable!(),
    };
    for f in winner {
        assert_eq!(std::fs::read_to_string(site.join(&f.rel)).unwrap(), text(f));
    }
}

#[test]
fn paths_that_one_file_system_sees_as_one_collide() {
    let mut names = Namespace::default();
    names.claim("baselines/openai-m.html", "the baseline openai-m.json").unwrap();
    let c = names.claim("baselines/OpenAI-M.html", "the baseline OpenAI-M.json").unwrap_err();
    assert_eq!(c.taken_by, "the baseline openai-m.json");
    assert!(c.to_string().contains("OpenAI-M.json") && c.to_string().contains("openai-m.json"), "{c}");
    names.claim("caf\u{e9}.html", "NFC").unwrap();
    assert!(names.claim("cafe\u{301}.html", "NFD").is_err());
    assert!(names.claim("CAFE\u{301}.HTML", "NFD upper").is_err());
    assert!(names.is_taken("Café.html"));
    names.claim("cafe.html", "plain").unwrap();
}

/// Every file and link under `root`, with what it holds or leads to.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut all = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false).into_iter().flatten() {
        let path = entry.path().to_path_buf();
        let t = entry.file_type();
        if t.is_symlink() {
            all.insert(path.clone(), format!("-> {}", std::fs::read_link(&path).unwrap().display()));
        } else if t.is_file() {
            all.insert(path.clone(), String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned());
        }
    }
    all
}

/// A small world: a project with its sources, a home folder, a folder
/// outside holding a style sheet, and links to each (and to nowhere).
fn world(root: &Path) -> Vec<&'static str> {
    let put = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put("project/docs/guide.md", "# Guide");
    put("project/docs/static/site.css", "body{}");
    put("project/evals/baselines/m.json", "{}");
    put("project/evals/tasks/t.json", "{}");
    put("project/templates/page.html", "t");
    put("project/README.md", "readme");
    put("home/.bashrc", "rc");
    put("home/.ssh/id_ed25519", "key");
    put("outside/style.css", "theirs");
    std::fs::create_dir_all(root.join("empty")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(root.join("project/docs"), root.join("project/docs-link")).unwrap();
        symlink(root.join("outside"), root.join("project/out-link")).unwrap();
        symlink(root.join("home"), root.join("project/home-link")).unwrap();
        symlink(root.join("nowhere"), root.join("project/dangling")).unwrap();
        symlink("..", root.join("project/up")).unwrap();
    }
    vec![
        "project",
        "docs",
        "evals",
        "baselines",
        "templates",
        "static",
        "home",
        ".ssh",
        "outside",
        "empty",
        "docs-link",
        "out-link",
        "home-link",
        "dangling",
        "up",
        "site",
        "new",
        "a",
        "b",
        ".",
        "..",
        "..",
        "..",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Whatever `--out` is made of (existing and missing folders, `..`,
    /// `.`, links to sources, to outside, to home, to nowhere), a build and
    /// a second build with fewer files never change or remove a file it
    /// did not write, and a refusal names the path it was given.
    #[test]
    fn no_out_path_changes_a_file_publish_did_not_write(
        picks in prop::collection::vec(0usize..64, 1..7),
        second_keeps in 0usize..3,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let names = world(&root);
        let mut out = root.join("project");
        for p in &picks {
            out.push(names[p % names.len()]);
        }
        let project = root.join("project");
        let sources = [project.join("docs"), project.join("evals/baselines"), project.join("evals"), project.join("templates")];
        let sources: Vec<&Path> = sources.iter().map(PathBuf::as_path).collect();
        let before = snapshot(&root);
        let files = [file("index.html", "i"), file("static/style.css", "site"), file("guide.html", "g"), file("a/b/c.html", "c")];
        let mut written: HashSet<PathBuf> = HashSet::new();
        for round in 0..2 {
            let these = if round == 0 { &files[..] } else { &files[..second_keeps + 1] };
            match OutputDir::claim(&out, &sources).and_then(|o| o.write(these, &mut Stamps::default(), None).map(|_| o)) {
                Ok(o) => {
                    written.extend(these.iter().map(|f| o.root().join(&f.rel)));
                    written.insert(o.root().join(MARKER));
                }
                Err(e) => {
                    let e = format!("{e:#}");
                    prop_assert!(e.contains(&out.display().to_string()), "the refusal does not name {}: {e}", out.display());
                }
            }
        }
        let after = snapshot(&root);
        for (path, was) in &before {
            if !written.contains(path) {
                prop_assert_eq!(after.get(path), Some(was), "{} changed (out = {})", path.display(), out.display());
            }
        }
        for path in after.keys() {
            let new = !before.contains_key(path);
            let ours = written.contains(path)
                || path.file_name().is_some_and(|n| n == LOCK || n == OWNER);
            prop_assert!(!new || ours, "{} appeared (out = {})", path.display(), out.display());
        }
    }
}
