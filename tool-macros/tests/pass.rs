//! Every supported form, compiled with the test build and run: each file of `tests/pass` is a
//! program whose `main` asserts what its form does (as a user's crate would write it), included
//! here as a module and run as a test: one crate, so their tools' names are distinct (two
//! tools of one name in a crate do not compile, `ui/fail/duplicate-tool-name.rs`). (They were trybuild `pass` cases; as those, each was
//! linked and run by a cargo of its own, and made trybuild build every dependency with code
//! generation instead of checking it: half of its time. The forms that must not compile stay
//! in `ui/fail`, `tests/compile_fail.rs`.)
#![allow(
    dead_code,
    reason = "the cases declare argument types to show their schemas; a program would read the fields"
)]

macro_rules! cases {
    ($($name:ident = $file:literal,)*) => {
        $(
            mod $name {
                include!($file);
                #[test]
                fn runs() {
                    main();
                }
            }
        )*
        /// Every file of `tests/pass` is listed above (a new case nobody listed would never run).
        #[test]
        fn every_case_is_listed() {
            let listed = [$($file),*].map(|f| f.trim_start_matches("pass/"));
            let mut found: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pass"))
                .expect("tests/pass is readable")
                .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
                .collect();
            found.sort();
            assert_eq!(found, listed, "tests/pass and the cases listed in tests/pass.rs differ");
        }
    };
}

cases! {
    async_and_sync = "pass/async-and-sync.rs",
    computed_defaults = "pass/computed-defaults.rs",
    crate_path = "pass/crate-path.rs",
    date_range = "pass/date-range.rs",
    distinct_names = "pass/distinct-names.rs",
    doc_comment_describes_tool = "pass/doc-comment-describes-tool.rs",
    doc_comments_as_descriptions = "pass/doc-comments-as-descriptions.rs",
    every_key = "pass/every-key.rs",
    host_controls = "pass/host-controls.rs",
    impl_group = "pass/impl-group.rs",
    nested_structs = "pass/nested-structs.rs",
    number_shapes = "pass/number-shapes.rs",
    recursive_type = "pass/recursive-type.rs",
    rename_rules = "pass/rename-rules.rs",
    result_return = "pass/result-return.rs",
    tagged_enums = "pass/tagged-enums.rs",
    task_support = "pass/task-support.rs",
    types_from_other_modules = "pass/types-from-other-modules.rs",
}
