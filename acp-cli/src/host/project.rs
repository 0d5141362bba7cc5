//! A project's agents: `.agentao/acp.json` loaded from a directory, the agents running, and
//! the `/acp` commands carried out on them.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use acp_host::supervisor::config::{AcpConfig, ConfigError};
use acp_host::supervisor::lifecycle::{Input, ServerState};

use super::commands::{self, AcpCommand, ClientView};
use super::runner::{AgentRunner, RunnerEvent, StopTimings};

/// Where the config lives, relative to the project root.
pub(crate) const CONFIG_PATH: &str = ".agentao/acp.json";

/// Why `.agentao/acp.json` could not be loaded.
#[derive(Debug)]
pub enum HostError {
    /// The file exists but cannot be read: `cannot read <path>: <error>`.
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        error: io::Error,
    },
    /// The document is broken (not JSON, not an object…).
    Config(ConfigError),
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Read { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            HostError::Config(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for HostError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HostError::Read { error, .. } => Some(error),
            HostError::Config(error) => Some(error),
        }
    }
}

/// What a command left to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandOutput {
    /// Print this.
    Text(String),
    /// `/acp send` to a configured server: the connection glue runs the turn.
    Send {
        /// The server.
        server: String,
        /// The prompt text.
        message: String,
    },
}

/// A project's agents; `T` is the connection glue's ticket for answering questions.
#[derive(Debug)]
pub struct Host<T> {
    runner: AgentRunner<T>,
    rejected: Vec<String>,
    clients: BTreeMap<String, ClientView>,
}

impl<T> Host<T> {
    /// Loads `<project_root>/.agentao/acp.json` (a missing file: no servers) with this
    /// process's environment for `$VAR` expansion and for the children.
    pub(crate) fn load(project_root: &Path, timings: StopTimings) -> Result<Host<T>, HostError> {
        let host_env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Self::load_with_env(project_root, host_env, timings)
    }

    /// As [`Host::load`], with `host_env` standing for this process's environment.
    pub fn load_with_env(
        project_root: &Path,
        host_env: Vec<(String, String)>,
        timings: StopTimings,
    ) -> Result<Host<T>, HostError> {
        let path = project_root.join(CONFIG_PATH);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(HostError::Read { path, error }),
        };
        let config = match text {
            None => AcpConfig::default(),
            Some(text) => {
                let lookup = |name: &str| {
                    host_env
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                };
                AcpConfig::parse(&text, &path.to_string_lossy(), lookup)
                    .map_err(HostError::Config)?
            }
        };
        Ok(Self::new(&config, project_root, host_env, timings))
    }

    /// A host for an already parsed config.
    pub(crate) fn new(
        config: &AcpConfig,
        project_root: &Path,
        host_env: Vec<(String, String)>,
        timings: StopTimings,
    ) -> Host<T> {
        Host {
            runner: AgentRunner::new(config, project_root, host_env, timings, seed()),
            rejected: config.rejected().iter().map(|e| e.to_string()).collect(),
            clients: BTreeMap::new(),
        }
    }

    /// The runner: events, inputs, stdin.
    pub fn runner(&mut self) -> &mut AgentRunner<T> {
        &mut self.runner
    }

    /// Records what the connection glue knows of server `name`'s client (`None`: no
    /// client), for `/acp status <name>`.
    pub fn set_client(&mut self, name: &str, client: Option<ClientView>) {
        match client {
            Some(client) => self.clients.insert(name.to_owned(), client),
            None => self.clients.remove(name),
        };
    }

    /// Carries out an `/acp` command. `stop` and `restart` wait for the stop sequence;
    /// `start` only spawns (the handshake follows through the runner's events).
    pub async fn execute(&mut self, command: AcpCommand<'_>) -> CommandOutput {
        let known = |host: &Self, name: &str| host.runner.supervisor().server(name).is_some();
        let text = match command {
            AcpCommand::List => {
                let rejected = self.rejected.clone();
                self.runner
                    .update(|s, _| commands::render_list(s, &rejected))
            }
            AcpCommand::Status(name) => {
                let runner = &self.runner;
                commands::render_status(
                    runner.supervisor(),
                    name,
                    runner.now(),
                    runner.last_activity(name),
                    self.clients.get(name),
                )
            }
            AcpCommand::Logs { server, lines } => {
                commands::render_logs(self.runner.supervisor(), server, lines)
            }
            AcpCommand::Start(name) | AcpCommand::Stop(name) | AcpCommand::Restart(name)
                if !known(self, name) =>
            {
                commands::unknown_server(name)
            }
            AcpCommand::Start(name) => {
                // A start is never refused, and the name is known.
                let _ = self.runner.handle(name, Input::Start);
                self.start_outcome(name, commands::started)
            }
            AcpCommand::Stop(name) => {
                let _ = self.runner.handle(name, Input::Stop);
                self.settle(name).await;
                commands::stopped(name)
            }
            AcpCommand::Restart(name) => {
                let _ = self.runner.handle(name, Input::Restart);
                self.settle(name).await;
                self.start_outcome(name, commands::restarted)
            }
            AcpCommand::Cancel(name) => {
                let result = self.runner.handle(name, Input::CancelTurn);
                commands::cancel_outcome(name, &result)
            }
            AcpCommand::Send { server, .. } if !known(self, server) => {
                commands::unknown_server(server)
            }
            AcpCommand::Send { server, message } => {
                return CommandOutput::Send {
                    server: server.to_owned(),
                    message: message.to_owned(),
                };
            }
        };
        CommandOutput::Text(text)
    }

    /// Stops every agent (the host is exiting): see [`AgentRunner::stop_all`].
    pub async fn stop_all(&mut self) -> Vec<RunnerEvent<T>> {
        self.runner.stop_all().await
    }

    /// Waits until server `name` is no longer stopping.
    async fn settle(&mut self, name: &str) {
        self.runner
            .run_until(|s| {
                s.server(name)
                    .is_none_or(|l| l.state() != ServerState::Stopping)
            })
            .await;
    }

    /// `Failed to start …` if the spawn failed, else `ok(name)`.
    fn start_outcome(&self, name: &str, ok: fn(&str) -> String) -> String {
        match self.runner.supervisor().server(name) {
            Some(l) if l.state() == ServerState::Failed => {
                commands::failed_to_start(name, l.last_error().unwrap_or("unknown error"))
            }
            _ => ok(name),
        }
    }
}

/// Interaction ids differ between runs; the process id is varied enough.
fn seed() -> u32 {
    std::process::id().wrapping_mul(0x9e37_79b9)
}
