//! `lore mcp` over stdio: every line the client sends is screened before the MCP service sees
//! it. A line that is not UTF-8 or not JSON gets JSON-RPC's parse error (−32700), one that is
//! JSON but not a JSON-RPC message an invalid-request error (−32600); the server goes on either
//! way. One writer puts the service's messages and these answers on stdout, whole lines each.

use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::LoreServer;
use crate::error::{CmdResult, CommandError};

/// Room for messages in flight between the screen, the service and the writer.
const PIPE_BYTES: usize = 1 << 20;

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
    let answers = lines.clone();
    let forwarder = tokio::spawn(async move {
        let mut from_service = BufReader::new(from_service);
        let mut line = Vec::new();
        while matches!(from_service.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            if answers.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let screen = tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        while matches!(input.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            let content = line.trim_ascii();
            if !content.is_empty() {
                match screen_line(content) {
                    None => {
                        let whole = [content, b"\n"].concat();
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
        // The input ended: so does the service's.
        let _ = to_service.shutdown().await;
    });

    let running = server
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

    #[test]
    fn garbage_lines_get_json_rpc_errors() {
        let code = |line: &[u8]| screen_line(line).map(|v| v["error"]["code"].as_i64().unwrap());
        assert_eq!(code(b"not json"), Some(-32700));
        assert_eq!(code(b"{\"jsonrpc\":\"2.0\",\xff}"), Some(-32700));
        assert_eq!(code(b"[1,2]"), Some(-32600));
        assert_eq!(code(br#"{"id":7}"#), Some(-32600));
        assert_eq!(screen_line(br#"{"id":7}"#).unwrap()["id"], 7);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            None
        );
    }
}
