//! An ACP client on tokio: starts the agent command given, prompts it once, prints the
//! streamed answer and the stop reason.
//!
//!     client_tokio [--prompt TEXT] AGENT [ARGS...]
//!
//! Try it against our agent (its demo backend echoes plain text):
//!
//!     cargo build -p acp-rs-cli
//!     cargo run -p acp-async --features tokio --example client_tokio -- target/debug/acp-cli --acp --stdio
//!
//! prints `Hello`, then `stop reason: end_turn`.

use std::io::Write;

use acp_async::client::Client;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut prompt = String::from("Hello");
    if args.first().map(String::as_str) == Some("--prompt") && args.len() > 1 {
        prompt = args.remove(1);
        args.remove(0);
    }
    let Some((program, rest)) = args.split_first() else {
        return Err("usage: client_tokio [--prompt TEXT] AGENT [ARGS...]".into());
    };
    let mut command = tokio::process::Command::new(program);
    command.args(rest);

    // Permission requests are rejected and nothing else is offered: the defaults.
    let (client, connection, _agent) =
        Client::builder("client_tokio", env!("CARGO_PKG_VERSION")).spawn_tokio(command)?;
    let cwd = std::env::current_dir()?.to_string_lossy().into_owned();

    let stop = connection
        .run_until(async {
            let agent = client.initialize().await?;
            if let Some(info) = agent.response.and_then(|r| r.agent_info) {
                eprintln!("connected to {} {}", info.name, info.version);
            }
            let session = client.new_session(&cwd).await?.session_id;
            let mut turn = client.prompt(&session, &prompt).await?;
            while let Some(update) = turn.next().await {
                if let Some(text) = update.agent_text() {
                    print!("{text}");
                    let _ = std::io::stdout().flush(); // show each chunk as it arrives
                }
            }
            println!();
            turn.finish().await
        })
        .await?;
    println!("stop reason: {stop}");
    Ok(())
}
