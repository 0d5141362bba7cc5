//! One or more values of every stable v1 message type of the official crate 1.20.0, as the
//! JSON the official types read: every method's params and result, every `sessionUpdate`
//! kind, every content block and tool call content, the capabilities in full, and every value
//! of the string enums. The tests read each into the official type first, so a sample that is
//! not a value of it fails there, before ours sees it.

use agent_client_protocol_schema::v1 as o;

use crate::common::{Tier, differential};

/// One sample: the message's tier and method, its JSON, and the differential run typed by the
/// official type it is a value of.
pub struct Sample {
    /// Which of our decoders reads it.
    pub tier: Tier,
    /// The method it belongs to.
    pub method: &'static str,
    /// The JSON.
    pub json: &'static str,
    /// [`differential`] with the official type; returns whether a view read it.
    pub run: fn(Tier, &str, &str) -> bool,
    /// The official type's name (its `$defs` name in the schemas).
    pub type_name: &'static str,
}

macro_rules! samples {
    ($( $ty:ident, $tier:ident, $method:literal, $json:expr; )*) => {
        /// Every sample, in the order written.
        pub fn all() -> Vec<Sample> {
            vec![$(
                Sample {
                    tier: Tier::$tier,
                    method: $method,
                    json: $json,
                    run: differential::<o::$ty>,
                    type_name: stringify!($ty),
                },
            )*]
        }
    };
}

samples! {
    // ---- initialize, authenticate, logout
    InitializeRequest, ClientRequest, "initialize",
        r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"session":{"compaction":{},"configOptions":{"boolean":{}},"notices":{}},"subagents":{},"plan":{},"auth":{"terminal":true},"elicitation":{"form":{},"url":{}},"_meta":{"x":1}},"clientInfo":{"name":"zed","title":"Zed","version":"1.0"}}"#;
    InitializeRequest, ClientRequest, "initialize",
        r#"{"protocolVersion":1,"clientCapabilities":{}}"#;
    InitializeResponse, AgentResponse, "initialize",
        r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"sessionCapabilities":{"list":{},"delete":{},"additionalDirectories":{},"systemPrompt":{"mode":{"override":{}}},"resume":{},"close":{}},"auth":{"logout":{}}},"authMethods":[{"id":"key","name":"API key","description":"Paste a key"},{"type":"terminal","id":"login","name":"Log in","args":["--login"],"env":{"MODE":"1"}}],"agentInfo":{"name":"agentao","title":"Agentao","version":"0.4.20"},"_meta":{"k":"v"}}"#;
    InitializeResponse, AgentResponse, "initialize",
        r#"{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"systemPrompt":{}}},"authMethods":[]}"#;
    AuthenticateRequest, ClientRequest, "authenticate", r#"{"methodId":"key"}"#;
    AuthenticateResponse, AgentResponse, "authenticate", r#"{}"#;
    LogoutRequest, ClientRequest, "logout", r#"{}"#;
    LogoutResponse, AgentResponse, "logout", r#"{"_meta":{"bye":true}}"#;

    // ---- sessions
    NewSessionRequest, ClientRequest, "session/new",
        r#"{"cwd":"/home/user/p","additionalDirectories":["/lib","/docs"],"mcpServers":[{"name":"fs","command":"/bin/mcp","args":["-v"],"env":[{"name":"A","value":"1"}]},{"type":"http","name":"web","url":"https://example.invalid/mcp","headers":[{"name":"X","value":"y"}]},{"type":"sse","name":"events","url":"https://example.invalid/sse","headers":[]}],"systemPrompt":{"mode":"append","content":[{"type":"text","text":"Be terse."}]}}"#;
    NewSessionRequest, ClientRequest, "session/new",
        r#"{"cwd":"/home/user/p","mcpServers":[],"systemPrompt":{"mode":"override","content":[{"type":"text","text":"You are a pirate."}],"_meta":{"p":1}}}"#;
    NewSessionResponse, AgentResponse, "session/new",
        r#"{"sessionId":"sess_1","modes":{"currentModeId":"write","availableModes":[{"id":"read","name":"Read-only","description":"No writes."},{"id":"write","name":"Write"}]},"configOptions":[{"id":"model","name":"Model","description":"Which model","category":"model","type":"select","currentValue":"gpt","options":[{"value":"gpt","name":"GPT","description":"fast"}]},{"id":"effort","name":"Effort","category":"model_config","type":"select","currentValue":"hi","options":[{"group":"g","name":"Group","options":[{"value":"hi","name":"High"}]}]},{"id":"fast","name":"Fast","category":"thought_level","type":"boolean","currentValue":false},{"id":"m","name":"Mode","category":"mode","type":"boolean","currentValue":true},{"id":"v","name":"Vendor","category":"_vendor","type":"boolean","currentValue":true}]}"#;
    LoadSessionRequest, ClientRequest, "session/load",
        r#"{"mcpServers":[],"cwd":"/home/user/p","additionalDirectories":["/lib"],"sessionId":"sess_1","systemPrompt":{"mode":"append","content":[{"type":"text","text":"x"}]}}"#;
    LoadSessionResponse, AgentResponse, "session/load",
        r#"{"modes":{"currentModeId":"plan","availableModes":[]},"configOptions":[]}"#;
    LoadSessionResponse, AgentResponse, "session/load", r#"{}"#;
    ListSessionsRequest, ClientRequest, "session/list", r#"{"cwd":"/home/user/p","cursor":"c1"}"#;
    ListSessionsRequest, ClientRequest, "session/list", r#"{}"#;
    ListSessionsResponse, AgentResponse, "session/list",
        r#"{"sessions":[{"sessionId":"sess_1","cwd":"/home/user/p","additionalDirectories":["/lib"],"title":"Fix bug","updatedAt":"2026-01-01T00:00:00Z","_meta":{"m":1}},{"sessionId":"sess_2","cwd":"/w2"}],"nextCursor":"c2"}"#;
    DeleteSessionRequest, ClientRequest, "session/delete", r#"{"sessionId":"sess_1"}"#;
    DeleteSessionResponse, AgentResponse, "session/delete", r#"{}"#;
    ResumeSessionRequest, ClientRequest, "session/resume",
        r#"{"sessionId":"sess_1","cwd":"/home/user/p","additionalDirectories":["/lib"],"mcpServers":[{"type":"http","name":"web","url":"https://example.invalid","headers":[]}],"systemPrompt":{"mode":"append","content":[{"type":"text","text":"x"}]}}"#;
    ResumeSessionRequest, ClientRequest, "session/resume", r#"{"sessionId":"sess_1","cwd":"/home/user/p"}"#;
    ResumeSessionResponse, AgentResponse, "session/resume",
        r#"{"configOptions":[{"id":"b","name":"B","type":"boolean","currentValue":true}]}"#;
    CloseSessionRequest, ClientRequest, "session/close", r#"{"sessionId":"sess_1","_meta":{"why":"done"}}"#;
    CloseSessionResponse, AgentResponse, "session/close", r#"{}"#;
    SetSessionModeRequest, ClientRequest, "session/set_mode", r#"{"sessionId":"sess_1","modeId":"plan"}"#;
    SetSessionModeResponse, AgentResponse, "session/set_mode", r#"{}"#;
    SetSessionConfigOptionRequest, ClientRequest, "session/set_config_option",
        r#"{"sessionId":"sess_1","configId":"model","value":"gpt"}"#;
    SetSessionConfigOptionRequest, ClientRequest, "session/set_config_option",
        r#"{"sessionId":"sess_1","configId":"fast","type":"boolean","value":true}"#;
    SetSessionConfigOptionResponse, AgentResponse, "session/set_config_option",
        r#"{"configOptions":[{"id":"fast","name":"Fast","type":"boolean","currentValue":true}]}"#;

    // ---- prompt turn
    PromptRequest, ClientRequest, "session/prompt",
        r#"{"sessionId":"sess_1","prompt":[{"type":"text","text":"Hi \"there\"\n","annotations":{"audience":["user","assistant"],"lastModified":"2026-01-01","priority":0.5}},{"type":"image","data":"aGk=","mimeType":"image/png","uri":"file:///a.png"},{"type":"audio","data":"aGk=","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///a.txt","name":"a.txt","title":"A","description":"the a","mimeType":"text/plain","size":12},{"type":"resource","resource":{"uri":"file:///b.txt","mimeType":"text/plain","text":"bee"}},{"type":"resource","resource":{"uri":"file:///c.bin","blob":"AAE="}}],"_meta":{"trace":"t1"}}"#;
    PromptResponse, AgentResponse, "session/prompt", r#"{"stopReason":"end_turn"}"#;
    PromptResponse, AgentResponse, "session/prompt", r#"{"stopReason":"max_tokens"}"#;
    PromptResponse, AgentResponse, "session/prompt", r#"{"stopReason":"max_turn_requests"}"#;
    PromptResponse, AgentResponse, "session/prompt", r#"{"stopReason":"refusal"}"#;
    PromptResponse, AgentResponse, "session/prompt", r#"{"stopReason":"cancelled","_meta":{"m":1}}"#;
    CancelNotification, ClientNotification, "session/cancel", r#"{"sessionId":"sess_1"}"#;
    CancelRequestNotification, ClientNotification, "$/cancel_request", r#"{"requestId":7}"#;
    CancelRequestNotification, AgentNotification, "$/cancel_request", r#"{"requestId":"r-1"}"#;

    // ---- session/update: every kind
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"},"messageId":"u1"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"},"messageId":"m1"},"_meta":{"seq":3}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"},"messageId":"t1"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Run ls","name":"shell","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"t1"},{"type":"diff","path":"/a","oldText":"x","newText":"y"},{"type":"diff","path":"/new","newText":"n"},{"type":"content","content":{"type":"text","text":"out"}},{"type":"session","sessionId":"sub_1"}],"locations":[{"path":"/a","line":3},{"path":"/b"}],"rawInput":{"cmd":"ls"},"rawOutput":[1,2]}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call","toolCallId":"c2","title":"Think"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"edit","status":"completed","title":"t","name":"apply_patch","content":[{"type":"content","content":{"type":"text","text":"done"}}],"locations":[],"rawInput":{"a":1},"rawOutput":"ok"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"read"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"delete"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"move"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"search"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"think"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"fetch"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"switch_mode"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"other"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"medium","status":"in_progress"},{"content":"c","priority":"low","status":"completed"}]}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending","_meta":{"e":1}}]}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r##"{"sessionId":"sess_1","update":{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p2","content":"# Plan\n- [ ] a","path":"/home/user/p/PLAN.md"},"_meta":{"u":1}}}"##;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"plan_removed","planId":"p1"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"echo","description":"Echo text","input":{"hint":"text"}},{"name":"plan","description":"Plan"}]}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"config_option_update","configOptions":[{"id":"think","name":"Thinking","category":"thought_level","type":"select","currentValue":"high","options":[{"value":"high","name":"High"}]},{"id":"x","name":"X","type":"boolean","currentValue":true}]}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"session_info_update","title":"New title","updatedAt":"2026-11-25T00:00:00Z"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"session_info_update","title":null}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"usage_update","used":0,"size":1000000}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"notice","severity":"info","title":"Indexed","description":"120 files"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"notice","severity":"warning","title":"Rate limited"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"notice","severity":"error","title":"Failed"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"notice","severity":"critical","title":"A severity from the future"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"compaction_update","compactionId":"k1","status":"in_progress"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"compaction_update","compactionId":"k1","status":"completed","summary":[{"type":"text","text":"sum"}],"error":null}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"compaction_update","compactionId":"k1","status":"failed","error":"too big"}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"compaction_update","compactionId":"k1","status":"cancelled","summary":null}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"compaction_summary_chunk","compactionId":"k1","content":{"type":"text","text":"s"}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","title":"Researcher","description":"Reads the docs","capabilities":{"cancel":{}},"state":{"state":"running"},"cwd":"/home/user/p","additionalDirectories":["/lib"]}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","description":null,"state":{"state":"idle","stopReason":"end_turn"}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","state":{"state":"idle","stopReason":"error","error":{"code":-32603,"message":"boom","data":{"why":1}}}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","state":{"state":"idle"}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","state":{"state":"idle","stopReason":"paused"}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","state":{"state":"requires_action"}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","state":{"state":"unknown","_meta":{"s":1}}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","state":{"state":"sleeping","since":3}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"subagent_update","sessionId":"sub_1","state":null,"title":null,"cwd":null}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"session_message","messageId":"m2","senderSessionId":"sub_1","recipientSessionId":"sess_1","senderMessageId":"m9","content":[{"type":"text","text":"found it"}],"_meta":{"k":1}}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"session_message","messageId":"m2","recipientMessageId":null,"content":null}}"#;
    SessionNotification, AgentNotification, "session/update",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"session_message_chunk","messageId":"m2","content":{"type":"text","text":"fo"}}}"#;

    // ---- permission, files, terminals
    RequestPermissionRequest, AgentRequest, "session/request_permission",
        r#"{"sessionId":"sess_1","toolCall":{"toolCallId":"c1","title":"Write /a","name":"write_file","kind":"edit","status":"pending","content":[{"type":"diff","path":"/a","newText":"x"}]},"options":[{"optionId":"ao","name":"Allow once","kind":"allow_once"},{"optionId":"aa","name":"Always","kind":"allow_always"},{"optionId":"ro","name":"Reject","kind":"reject_once"},{"optionId":"ra","name":"Never","kind":"reject_always","_meta":{"o":1}}]}"#;
    RequestPermissionResponse, ClientResponse, "session/request_permission",
        r#"{"outcome":{"outcome":"selected","optionId":"ao"}}"#;
    RequestPermissionResponse, ClientResponse, "session/request_permission",
        r#"{"outcome":{"outcome":"cancelled"},"_meta":{"r":1}}"#;
    ReadTextFileRequest, AgentRequest, "fs/read_text_file",
        r#"{"sessionId":"sess_1","path":"/a.txt","line":10,"limit":50}"#;
    ReadTextFileResponse, ClientResponse, "fs/read_text_file", r#"{"content":"line\n"}"#;
    WriteTextFileRequest, AgentRequest, "fs/write_text_file",
        r#"{"sessionId":"sess_1","path":"/a.txt","content":"new\n"}"#;
    WriteTextFileResponse, ClientResponse, "fs/write_text_file", r#"{}"#;
    CreateTerminalRequest, AgentRequest, "terminal/create",
        r#"{"sessionId":"sess_1","command":"ls","args":["-la"],"env":[{"name":"A","value":"1"}],"cwd":"/home/user/p","outputByteLimit":4096}"#;
    CreateTerminalRequest, AgentRequest, "terminal/create", r#"{"sessionId":"sess_1","command":"true"}"#;
    CreateTerminalResponse, ClientResponse, "terminal/create", r#"{"terminalId":"t1"}"#;
    TerminalOutputRequest, AgentRequest, "terminal/output", r#"{"sessionId":"sess_1","terminalId":"t1"}"#;
    TerminalOutputResponse, ClientResponse, "terminal/output",
        r#"{"output":"hi\n","truncated":false,"exitStatus":{"exitCode":0}}"#;
    TerminalOutputResponse, ClientResponse, "terminal/output",
        r#"{"output":"","truncated":true,"exitStatus":{"signal":"SIGKILL"}}"#;
    WaitForTerminalExitRequest, AgentRequest, "terminal/wait_for_exit", r#"{"sessionId":"sess_1","terminalId":"t1"}"#;
    WaitForTerminalExitResponse, ClientResponse, "terminal/wait_for_exit", r#"{"exitCode":1}"#;
    WaitForTerminalExitResponse, ClientResponse, "terminal/wait_for_exit", r#"{"signal":"SIGTERM"}"#;
    KillTerminalRequest, AgentRequest, "terminal/kill", r#"{"sessionId":"sess_1","terminalId":"t1"}"#;
    KillTerminalResponse, ClientResponse, "terminal/kill", r#"{}"#;
    ReleaseTerminalRequest, AgentRequest, "terminal/release", r#"{"sessionId":"sess_1","terminalId":"t1"}"#;
    ReleaseTerminalResponse, ClientResponse, "terminal/release", r#"{}"#;

    // ---- elicitation
    CreateElicitationRequest, AgentRequest, "elicitation/create",
        r#"{"mode":"form","sessionId":"sess_1","toolCallId":"c1","requestedSchema":{"type":"object","title":"Login","properties":{"name":{"type":"string","title":"Name","minLength":1,"maxLength":40,"pattern":"^[a-z]+$","default":"bob"},"email":{"type":"string","format":"email"},"site":{"type":"string","format":"uri"},"day":{"type":"string","format":"date"},"at":{"type":"string","format":"date-time"},"color":{"type":"string","enum":["red","blue"]},"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large","description":"big"}]},"age":{"type":"integer","minimum":0,"maximum":150,"default":30},"ratio":{"type":"number","minimum":0.0,"maximum":1.0,"default":0.5},"ok":{"type":"boolean","default":true},"tags":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["a","b"]},"default":["a"]},"picks":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}},"required":["name"],"description":"Who are you?"},"message":"Please log in"}"#;
    CreateElicitationRequest, AgentRequest, "elicitation/create",
        r#"{"mode":"url","requestId":5,"elicitationId":"e1","url":"https://example.invalid/auth","message":"Open this"}"#;
    CreateElicitationResponse, ClientResponse, "elicitation/create",
        r#"{"action":"accept","content":{"name":"bob","age":30,"ratio":0.5,"ok":true,"tags":["a","b"]}}"#;
    CreateElicitationResponse, ClientResponse, "elicitation/create", r#"{"action":"decline"}"#;
    CreateElicitationResponse, ClientResponse, "elicitation/create", r#"{"action":"cancel"}"#;
    CompleteElicitationNotification, AgentNotification, "elicitation/complete", r#"{"elicitationId":"e1"}"#;
}
