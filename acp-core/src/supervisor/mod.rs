//! The sans-IO model of the agent processes a host runs (`.agentao/acp.json`). Being written.
