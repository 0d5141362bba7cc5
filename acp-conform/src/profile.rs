//! What the agent says about itself in the run's first handshake (its `initialize` answer
//! and the commands it advertises after `session/new`). Cases that need a capability or a
//! command read it here, and skip when it is not advertised.

use serde_json::Value;

/// The agent's advertisement; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// The `initialize` result.
    pub init: Value,
    /// Names (without `/`) from the first `available_commands_update`.
    pub commands: Vec<String>,
    /// Milliseconds from spawn to the `initialize` answer in the first handshake.
    pub init_ms: u128,
}

impl Profile {
    /// `agentCapabilities` at `path` (`["sessionCapabilities", "list"]`): advertised when
    /// `true` or an object (a support marker), not when missing, `false` or `null`.
    pub fn advertises(&self, path: &[&str]) -> bool {
        let mut at = self.init.get("agentCapabilities");
        for key in path {
            at = at.and_then(|v| v.get(key));
        }
        matches!(at, Some(Value::Bool(true)) | Some(Value::Object(_)))
    }

    /// Whether `/name` is among the advertised commands.
    pub fn has_command(&self, name: &str) -> bool {
        self.commands.iter().any(|c| c == name)
    }

    /// The advertised commands, for skip reasons.
    pub fn commands_text(&self) -> String {
        if self.commands.is_empty() {
            String::from("it advertised none")
        } else {
            format!("it advertised /{}", self.commands.join(", /"))
        }
    }

    /// Whether `_meta["_agentao.cn/extensions"]` lists `method`.
    pub fn has_extension(&self, method: &str) -> bool {
        let list = self
            .init
            .get("_meta")
            .and_then(|m| m.get("_agentao.cn/extensions"))
            .and_then(Value::as_array);
        list.into_iter().flatten().any(|entry| {
            entry.as_str() == Some(method)
                || entry.get("method").and_then(Value::as_str) == Some(method)
        })
    }
}
