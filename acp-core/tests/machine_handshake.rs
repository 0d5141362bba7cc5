//! The handshake machine, transition by transition (R-INIT-1 … R-INIT-4).

use acp_core::machine::handshake::{
    Capabilities, Handshake, HandshakeInput as I, HandshakeOutput as O, HandshakeState,
    PROTOCOL_VERSION, RequestedVersion,
};
use acp_core::machine::{Rejection, UsageError};
use acp_core::wire::ErrorCode;

const AGENT: Capabilities = Capabilities::LOAD_SESSION.union(Capabilities::PROMPT_IMAGE);

fn uninitialized() -> Handshake {
    Handshake::new(AGENT)
}

fn initialized(peer: Capabilities) -> Handshake {
    Handshake::with_state(
        AGENT,
        HandshakeState::Initialized {
            protocol_version: 1,
            peer,
        },
    )
}

fn init(version: RequestedVersion, capabilities: Capabilities) -> I<'static> {
    I::PeerInitialize {
        version,
        capabilities,
    }
}

#[test]
fn requests_before_initialize_get_32002_naming_the_method() {
    for method in [
        "session/new",
        "session/prompt",
        "authenticate",
        "no/such_method",
    ] {
        let mut h = uninitialized();
        let out = h.handle(I::PeerRequest { method });
        let O::Reject(rejection) = out else {
            panic!("{method}: {out:?}")
        };
        assert_eq!(rejection, Rejection::BeforeInitialize { method });
        assert_eq!(rejection.code(), ErrorCode(-32002));
        assert_eq!(
            rejection.to_string(),
            format!("{method} called before initialize handshake")
        );
        assert_eq!(h.state(), HandshakeState::Uninitialized);
    }
}

#[test]
fn notifications_before_initialize_are_ignored() {
    let mut h = uninitialized();
    assert_eq!(h.handle(I::PeerNotification), O::Ignore);
    assert_eq!(h.state(), HandshakeState::Uninitialized);
}

#[test]
fn initialize_answers_version_1_for_every_u16() {
    for v in [0, 1, 2, 7, 65535] {
        let mut h = uninitialized();
        let peer = Capabilities::FS_READ;
        assert_eq!(
            h.handle(init(RequestedVersion::Integer(v), peer)),
            O::AnswerInitialize {
                protocol_version: PROTOCOL_VERSION
            },
            "version {v}"
        );
        assert_eq!(
            h.state(),
            HandshakeState::Initialized {
                protocol_version: 1,
                peer
            }
        );
        assert_eq!(h.peer(), peer);
    }
}

#[test]
fn initialize_outside_u16_is_invalid_params() {
    for version in [
        RequestedVersion::Integer(-1),
        RequestedVersion::Integer(65536),
        RequestedVersion::Integer(i64::MIN),
        RequestedVersion::HugeInteger,
    ] {
        let mut h = uninitialized();
        let out = h.handle(init(version, Capabilities::empty()));
        assert_eq!(
            out,
            O::Reject(Rejection::ProtocolVersionOutOfRange),
            "{version:?}"
        );
        assert_eq!(
            Rejection::ProtocolVersionOutOfRange.code(),
            ErrorCode(-32602)
        );
        assert_eq!(
            Rejection::ProtocolVersionOutOfRange.to_string(),
            "Invalid params: initialize.protocolVersion must be an integer from 0 to 65535"
        );
        assert!(!h.is_initialized());
    }
}

#[test]
fn initialize_with_a_non_integer_version_is_invalid_params() {
    let mut h = uninitialized();
    let out = h.handle(init(RequestedVersion::NotInteger, Capabilities::empty()));
    let O::Reject(rejection) = out else {
        panic!("{out:?}")
    };
    assert_eq!(rejection.code(), ErrorCode::INVALID_PARAMS);
    assert_eq!(
        rejection.to_string(),
        "Invalid params: initialize.protocolVersion must be an integer"
    );
    assert!(!h.is_initialized());
}

#[test]
fn a_bad_repeated_initialize_keeps_the_first_handshake() {
    let mut h = initialized(Capabilities::TERMINAL);
    let out = h.handle(init(RequestedVersion::NotInteger, Capabilities::empty()));
    assert!(matches!(out, O::Reject(_)));
    assert_eq!(h.peer(), Capabilities::TERMINAL);
}

#[test]
fn repeated_initialize_answers_the_same_and_takes_the_new_capabilities() {
    let mut h = initialized(Capabilities::TERMINAL);
    assert_eq!(
        h.handle(init(RequestedVersion::Integer(1), Capabilities::FS_WRITE)),
        O::AnswerInitialize {
            protocol_version: 1
        }
    );
    assert_eq!(h.peer(), Capabilities::FS_WRITE);
}

#[test]
fn after_initialize_everything_proceeds() {
    let mut h = initialized(Capabilities::empty());
    assert_eq!(
        h.handle(I::PeerRequest {
            method: "session/new"
        }),
        O::Proceed
    );
    assert_eq!(h.handle(I::PeerNotification), O::Proceed);
}

#[test]
fn client_side_handshake_completes_on_the_answer() {
    let mut h = Handshake::new(Capabilities::FS_READ);
    assert_eq!(h.require_initialized(), Err(UsageError::NotInitialized));
    let out = h.handle(I::InitializeAnswered {
        protocol_version: 1,
        capabilities: AGENT,
    });
    assert_eq!(out, O::Ready);
    assert_eq!(h.require_initialized(), Ok(()));
    assert_eq!(h.require_peer(Capabilities::LOAD_SESSION), Ok(()));
    assert_eq!(h.local(), Capabilities::FS_READ);
}

#[test]
fn capabilities_gate_local_commands() {
    let h = uninitialized();
    assert_eq!(
        h.require_peer(Capabilities::FS_READ),
        Err(UsageError::NotInitialized)
    );
    let h = initialized(Capabilities::FS_READ);
    assert_eq!(h.require_peer(Capabilities::FS_READ), Ok(()));
    assert_eq!(
        h.require_peer(Capabilities::FS_WRITE),
        Err(UsageError::CapabilityNotAdvertised)
    );
    assert_eq!(
        UsageError::CapabilityNotAdvertised.to_string(),
        "the peer did not advertise this capability"
    );
}

#[test]
fn capability_bits_compose() {
    let caps = Capabilities::empty()
        .with(Capabilities::MCP_HTTP, true)
        .with(Capabilities::MCP_SSE, false)
        .with(Capabilities::ELICITATION, true);
    assert!(caps.contains(Capabilities::MCP_HTTP));
    assert!(!caps.contains(Capabilities::MCP_SSE));
    assert!(caps.contains(Capabilities::MCP_HTTP.union(Capabilities::ELICITATION)));
    assert!(caps.contains(Capabilities::empty()));
    assert_eq!(
        format!("{caps:?}"),
        r#"{"mcpCapabilities.http", "elicitation"}"#
    );
}
