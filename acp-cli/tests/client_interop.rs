//! `acp-cli client` against agents built on the official ACP SDKs (tests/interop/: Python,
//! TypeScript, Rust), installed by `tests/interop/setup.sh`: a permission request answered
//! both ways, a file read served by our client (and one it refuses), an ask_user question,
//! and a cancel.

mod client_support;

use client_support::*;

/// The three peer agents' command lines; a missing install fails the test with the fix.
fn peers() -> Vec<(&'static str, Vec<String>)> {
    sdk_peers("agent")
}

/// The file the peers' read check uses: 37 bytes, no digits.
const HELLO: &str = "hello there, a file with no numbers.\n";

#[test]
fn permission_allowed_and_rejected() {
    for (sdk, agent) in peers() {
        let dir = scratch_dir("interop-perm");
        let allow = client(
            &["--approve", "allow", "--prompt", "/tool edit Fix"],
            &agent,
            &dir,
            "",
        );
        assert_eq!(allow.code, Some(0), "{sdk}: {allow:?}");
        assert!(
            allow
                .stderr
                .contains("tool: Fix (edit) [pending]\nApproved (once)\n"),
            "{sdk}: {allow:?}"
        );
        assert!(
            allow.stderr.contains("— completed\n  Fix: done\n"),
            "{sdk}: {allow:?}"
        );
        assert!(
            allow.stderr.ends_with("stop reason: end_turn\n"),
            "{sdk}: {allow:?}"
        );

        let reject = client(
            &["--approve", "ask", "--prompt", "/tool edit Fix"],
            &agent,
            &dir,
            "3\n",
        );
        assert_eq!(reject.code, Some(0), "{sdk}: {reject:?}");
        assert!(
            reject.stderr.contains("Permission request from '"),
            "{sdk}: {reject:?}"
        );
        assert!(
            reject.stderr.contains("Rejected (once)\n"),
            "{sdk}: {reject:?}"
        );
        assert!(reject.stderr.contains("— failed"), "{sdk}: {reject:?}");
    }
}

#[test]
fn file_read_is_served_by_our_client() {
    for (sdk, agent) in peers() {
        let dir = scratch_dir("interop-read");
        std::fs::write(dir.join("hello.txt"), HELLO).unwrap();
        let path = dir.join("hello.txt");
        let read = client(
            &["--prompt", &format!("/read {}", path.display())],
            &agent,
            &dir,
            "",
        );
        assert_eq!(read.code, Some(0), "{sdk}: {read:?}");
        assert_eq!(
            read.stdout,
            format!("read 37 bytes from {}\n", path.display()),
            "{sdk}"
        );

        // Outside the cwd our client answers with an error, which the agent reports: proof
        // that the read went through fs/read_text_file to us.
        let other = scratch_dir("interop-elsewhere");
        std::fs::write(other.join("hello.txt"), HELLO).unwrap();
        let refused = client(
            &["--prompt", &format!("/read {}/hello.txt", other.display())],
            &agent,
            &dir,
            "",
        );
        assert!(
            refused
                .stderr
                .contains("— failed\n  path is outside the session's working directory"),
            "{sdk}: {refused:?}"
        );
    }
}

#[test]
fn ask_user_answered() {
    for (sdk, agent) in peers() {
        let dir = scratch_dir("interop-ask");
        let run = client(
            &["--approve", "ask", "--prompt", "/ask Your name?"],
            &agent,
            &dir,
            "Ada\n",
        );
        assert_eq!(run.code, Some(0), "{sdk}: {run:?}");
        assert!(run.stdout.contains("Ada"), "{sdk}: {run:?}");
        assert!(
            run.stderr.contains("Input request from '"),
            "{sdk}: {run:?}"
        );
    }
}

#[test]
fn cancel_ends_the_turn_cancelled() {
    for (sdk, agent) in peers() {
        let dir = scratch_dir("interop-cancel");
        let args: Vec<String> = ["client", "--prompt", "/sleep 10000", "--"]
            .iter()
            .map(|s| s.to_string())
            .chain(agent)
            .collect();
        let run = Running::start(&args, &dir, None);
        // The peers send nothing while sleeping; the client says when the prompt is out.
        run.wait_for("the prompt to be sent", |_, err| {
            err.contains("Sending to ")
        });
        run.interrupt();
        let done = run.finish();
        assert_eq!(done.code, Some(130), "{sdk}: {done:?}");
        assert!(
            done.stderr.ends_with("stop reason: cancelled\n"),
            "{sdk}: {done:?}"
        );
    }
}
