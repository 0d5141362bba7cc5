//! Placeholder until acp-async's agent trait lands: serves the official agent.
use tokio::io::DuplexStream;

pub async fn serve(stream: DuplexStream) {
    crate::official::serve(stream).await
}
