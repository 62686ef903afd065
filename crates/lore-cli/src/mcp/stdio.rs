//! `lore mcp` over stdio: every line the client sends is screened before the MCP service sees
//! it. A line that is not UTF-8 or not JSON gets JSON-RPC's parse error (−32700), one that is
//! JSON but not a JSON-RPC message an invalid-request error (−32600), and so does a line over
//! [`MAX_LINE_BYTES`] (read to its end in constant memory, answered with its id where the start
//! of the line names one); the server goes on either way. One writer puts the service's messages and these answers on stdout, whole lines each.
//! Each `tools/call` request is numbered as it is read (its turn, see `turns.rs`), so the
//! calls of the stream are applied in the order they were sent.
//!
//! When the input ends, every request read is answered before the service is told so (the MCP
//! service drains for a few seconds, then cancels what still runs): a client that writes its
//! requests and closes its end gets every answer, and no request it sent is dropped unrun.

use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::LoreServer;
use crate::error::{CmdResult, CommandError};

/// Room for messages in flight between the screen, the service and the writer.
const PIPE_BYTES: usize = 1 << 20;
/// The longest request line served (a memory's body at its 1 MiB bound, escaped, fits many
/// times over); a longer one is read to its end in constant memory and refused.
pub const MAX_LINE_BYTES: usize = 8 << 20;
/// How much of a refused line is kept to find its `id` in.
const ID_PREFIX_BYTES: usize = 64 << 10;

/// The answer to a line longer than [`MAX_LINE_BYTES`], of which `prefix` is the start: an
/// invalid-request error carrying the request's id when the prefix names one.
pub fn refuse_long_line(prefix: &[u8]) -> Value {
    let text = String::from_utf8_lossy(prefix);
    // The request's own `"id"`: a key of the top-level object (one nested in the params is
    // not the request's), read as far as the prefix goes.
    let id = top_level_id(&text).unwrap_or(Value::Null);
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32600,
        "message": format!("Invalid Request: the line is over {MAX_LINE_BYTES} bytes") } })
}

/// The value of the key `"id"` of the JSON object `text` starts with, when it is a number or a
/// string and stands in `text` (which may be cut anywhere after it).
fn top_level_id(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let (mut depth, mut at, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    let mut string_start = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    // A key of the top-level object, followed by its value.
                    let key = &text[string_start..=at];
                    let rest = text[at + 1..].trim_start();
                    if depth == 1 && key == "\"id\"" && rest.starts_with(':') {
                        let value = serde_json::Deserializer::from_str(rest[1..].trim_start())
                            .into_iter::<Value>()
                            .next()?
                            .ok()?;
                        return (value.is_string() || value.is_number()).then_some(value);
                    }
                }
                _ => {}
            }
        } else {
            match b {
                b'"' => {
                    in_string = true;
                    string_start = at;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        at += 1;
    }
    None
}

/// Reads one line (up to and with its `\n`) into `line`, keeping at most `cap` bytes of it.
/// Returns the bytes read (0 at the end of input) and whether the line was longer than `cap`.
async fn read_line_capped<R: tokio::io::AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<(usize, bool)> {
    let (mut read, mut cut) = (0, false);
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok((read, cut));
        }
        let (n, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = cap.saturating_sub(line.len());
        cut |= n > room;
        line.extend_from_slice(&buf[..n.min(room)]);
        input.consume(n);
        read += n;
        if done {
            return Ok((read, cut));
        }
    }
}

/// The answer to a line that is not a JSON-RPC message, if it is not one.
pub fn screen_line(line: &[u8]) -> Option<Value> {
    let error = |code: i64, message: &str, id: Value| json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    let Ok(text) = std::str::from_utf8(line) else {
        return Some(error(
            -32700,
            "Parse error: the line is not UTF-8",
            Value::Null,
        ));
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Some(error(-32700, &format!("Parse error: {e}"), Value::Null));
        }
    };
    let is_message = value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && ["method", "result", "error"]
            .iter()
            .any(|k| value.get(*k).is_some());
    if is_message {
        return None;
    }
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    Some(error(
        -32600,
        "Invalid Request: expected a JSON-RPC 2.0 message",
        id,
    ))
}

/// The request `line` with its turn written into `params._meta` when it is a `tools/call`
/// request (a turn the client wrote itself is replaced); `None` for any other message.
pub fn stamp_turn(line: &[u8], turn: u64) -> Option<Vec<u8>> {
    // Cheap test first: most lines are not tool calls.
    if !line.windows(10).any(|w| w == b"tools/call") {
        return None;
    }
    let mut value: Value = serde_json::from_slice(line).ok()?;
    if value.get("method").and_then(Value::as_str) != Some("tools/call")
        || value.get("id").is_none()
    {
        return None;
    }
    let params = value.get_mut("params")?.as_object_mut()?;
    params.get("name")?.as_str()?;
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Default::default()));
    meta.as_object_mut()?
        .insert(super::turns::TURN_KEY.into(), json!(turn));
    serde_json::to_vec(&value).ok()
}

/// The requests sent to the service and not yet answered (by their JSON-RPC id), so that the
/// end of the input waits for their answers.
#[derive(Default)]
struct Outstanding {
    state: std::sync::Mutex<(std::collections::HashSet<String>, bool)>,
    changed: tokio::sync::Notify,
}

/// What of a JSON-RPC message tells whether it opens or settles a request.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<CancelledParams>,
}

/// The parameters of `notifications/cancelled` (any other method's are ignored).
#[derive(serde::Deserialize)]
struct CancelledParams {
    #[serde(default, rename = "requestId")]
    request_id: Option<Value>,
}

impl Outstanding {
    /// Notes a line the client sent: a request is awaited, a cancellation settles its request
    /// (a cancelled request gets no answer).
    fn sent(&self, line: &[u8]) {
        let Ok(head) = serde_json::from_slice::<Head>(line) else {
            return;
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match (head.method.as_deref(), head.id) {
            (Some("notifications/cancelled"), None) => {
                if let Some(id) = head.params.and_then(|p| p.request_id) {
                    state.0.remove(&id.to_string());
                }
            }
            (Some(_), Some(id)) => {
                state.0.insert(id.to_string());
            }
            _ => return,
        }
        drop(state);
        self.changed.notify_waiters();
    }

    /// Notes a line the service wrote: an answer settles its request.
    fn answered(&self, line: &[u8]) {
        let Ok(Head {
            id: Some(id),
            method: None,
            ..
        }) = serde_json::from_slice::<Head>(line)
        else {
            return;
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0.remove(&id.to_string());
        drop(state);
        self.changed.notify_waiters();
    }

    /// The service's output ended: nothing more will be answered.
    fn closed(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.changed.notify_waiters();
    }

    /// Waits until every request sent is answered (or the service's output ended).
    async fn settled(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if state.0.is_empty() || state.1 {
                    return;
                }
            }
            changed.await;
        }
    }
}

/// Serves `server` on `input` and `output` (stdin and stdout) until the input ends.
pub async fn serve<R, W>(server: LoreServer, input: R, mut output: W) -> CmdResult
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_service, service_in) = tokio::io::duplex(PIPE_BYTES);
    let (service_out, from_service) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut outgoing) = mpsc::unbounded_channel::<Vec<u8>>();

    let writer = tokio::spawn(async move {
        while let Some(line) = outgoing.recv().await {
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    let outstanding = std::sync::Arc::new(Outstanding::default());
    let answers = lines.clone();
    let settling = std::sync::Arc::clone(&outstanding);
    let forwarder = tokio::spawn(async move {
        let mut from_service = BufReader::new(from_service);
        let mut line = Vec::new();
        while matches!(from_service.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            settling.answered(&line);
            if answers.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
        settling.closed();
    });
    let awaited = std::sync::Arc::clone(&outstanding);
    let screen = tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        let mut turn = 0u64;
        loop {
            let cut = match read_line_capped(&mut input, &mut line, MAX_LINE_BYTES + 1).await {
                Ok((n, cut)) if n > 0 => cut,
                _ => break,
            };
            if cut {
                line.truncate(ID_PREFIX_BYTES);
                let answer = refuse_long_line(&line);
                let _ = lines.send(format!("{answer}\n").into_bytes());
                line.clear();
                continue;
            }
            let content = line.trim_ascii();
            if !content.is_empty() {
                match screen_line(content) {
                    None => {
                        let stamped = stamp_turn(content, turn);
                        turn += u64::from(stamped.is_some());
                        let whole = [stamped.as_deref().unwrap_or(content), b"\n"].concat();
                        awaited.sent(content);
                        if to_service.write_all(&whole).await.is_err() {
                            break;
                        }
                    }
                    Some(answer) => {
                        let _ = lines.send(format!("{answer}\n").into_bytes());
                    }
                }
            }
            line.clear();
        }
        // The input ended: once what it asked is answered, so does the service's.
        awaited.settled().await;
        let _ = to_service.shutdown().await;
    });

    let running = server
        .ordered()
        .serve((service_in, service_out))
        .await
        .map_err(|e| CommandError::usage(format!("MCP over stdio: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| CommandError::usage(format!("MCP over stdio: {e}")))?;
    let _ = screen.await;
    let _ = forwarder.await;
    let _ = writer.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::screen_line;
    use serde_json::Value;

    #[test]
    fn garbage_lines_get_json_rpc_errors() {
        let code = |line: &[u8]| screen_line(line).map(|v| v["error"]["code"].as_i64().unwrap());
        assert_eq!(code(b"not json"), Some(-32700));
        assert_eq!(code(b"{\"jsonrpc\":\"2.0\",\xff}"), Some(-32700));
        assert_eq!(code(b"[1,2]"), Some(-32600));
        assert_eq!(code(br#"{"id":7}"#), Some(-32600));
        assert_eq!(screen_line(br#"{"id":7}"#).unwrap()["id"], 7);
        let long = |prefix: &str| super::refuse_long_line(prefix.as_bytes());
        assert_eq!(
            long(r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","par"#)["id"],
            42
        );
        assert_eq!(long(r#"{"id" : "a\"b","method""#)["id"], "a\"b");
        assert_eq!(
            long(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"text":"xx"#)["id"],
            Value::Null
        );
        assert_eq!(long("{")["error"]["code"], -32600);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            None
        );
    }

    #[test]
    fn tool_calls_are_numbered_in_their_meta() {
        use super::stamp_turn;
        let call = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"recall","arguments":{},"_meta":{"progressToken":1,"lore/turn":99}}}"#;
        let stamped: Value = serde_json::from_slice(&stamp_turn(call, 7).unwrap()).unwrap();
        assert_eq!(stamped["params"]["_meta"]["lore/turn"], 7);
        assert_eq!(stamped["params"]["_meta"]["progressToken"], 1);
        assert_eq!(stamped["params"]["arguments"], serde_json::json!({}));
        let bare = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}"#;
        let stamped: Value = serde_json::from_slice(&stamp_turn(bare, 0).unwrap()).unwrap();
        assert_eq!(stamped["params"]["_meta"]["lore/turn"], 0);
        assert!(stamp_turn(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, 0).is_none());
        let note = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#;
        assert!(
            stamp_turn(note, 0).is_none(),
            "a notification has no answer to wait for"
        );
        let nameless = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}"#;
        assert!(stamp_turn(nameless, 0).is_none());
    }
}
