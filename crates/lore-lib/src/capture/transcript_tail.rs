//! Reading only what is new in a session's transcript: the session's state keeps the byte
//! offset where the last read stopped (after a whole line) and a hash of the bytes just before
//! it, so a hook reads the lines appended since, however long the transcript has grown. A file
//! that was replaced or cut shorter (the hash or the length disagree) is read whole, skipping
//! the lines already seen; a transcript that is one JSON document is always read whole.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::SessionState;
use super::transcript::{self, Transcript};
use crate::error::{Error, Result};

/// Bytes before the offset whose hash identifies the file read.
const TAIL_CHECK: u64 = 64;

/// What one read found, and where the next read starts.
#[derive(Debug, Default)]
pub struct NewTurns {
    /// The lines read this time.
    pub transcript: Transcript,
    /// Lines read in all, this time included.
    pub lines: usize,
    /// The byte offset after the last whole line read (0: the next read is whole).
    pub offset: u64,
    /// The hash of the bytes before `offset`.
    pub tail: u64,
}

impl NewTurns {
    /// Records in a session's state how far the transcript was read (never backwards: a
    /// concurrent read that got further stands).
    pub fn save(&self, state: &mut SessionState) {
        if self.lines >= state.transcript_lines {
            state.transcript_lines = self.lines;
            state.transcript_offset = self.offset;
            state.transcript_tail = self.tail;
        }
    }
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("reading {}", path.display()), e)
}

/// The hash of the up to [`TAIL_CHECK`] bytes before `offset`.
fn tail_hash(file: &mut File, offset: u64) -> std::io::Result<u64> {
    let start = offset.saturating_sub(TAIL_CHECK);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = vec![0u8; (offset - start) as usize];
    file.read_exact(&mut bytes)?;
    Ok(crate::hash::fnv1a(&bytes))
}

/// Reads the transcript at `path` from where `state` says this session stopped. `None` when
/// there is no such file.
pub fn read_new(path: &Path, state: &SessionState) -> Result<Option<NewTurns>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path, e)),
    };
    let len = file.metadata().map_err(|e| io(path, e))?.len();
    let offset = state.transcript_offset;
    let same_file = offset > 0
        && offset <= len
        && tail_hash(&mut file, offset).map_err(|e| io(path, e))? == state.transcript_tail;
    if same_file {
        let mut bytes = Vec::with_capacity((len - offset) as usize);
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(|e| io(path, e))?;
        // A line still being written is left for the next read.
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if let Ok(text) = std::str::from_utf8(&bytes[..whole]) {
            let mut read = transcript::parse_lines(text);
            for turn in &mut read.turns {
                turn.line += state.transcript_lines;
            }
            let offset = offset + whole as u64;
            return Ok(Some(NewTurns {
                lines: state.transcript_lines + read.lines,
                tail: tail_hash(&mut file, offset).map_err(|e| io(path, e))?,
                offset,
                transcript: read,
            }));
        }
    }
    let mut text = String::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text))
        .map_err(|e| io(path, e))?;
    if transcript::is_document(&text) {
        let read = transcript::parse(&text, state.transcript_lines);
        return Ok(Some(NewTurns {
            lines: read.lines,
            offset: 0,
            tail: 0,
            transcript: read,
        }));
    }
    let whole = text.rfind('\n').map_or(0, |i| i + 1);
    let read = transcript::parse(&text[..whole], state.transcript_lines);
    Ok(Some(NewTurns {
        lines: read.lines,
        tail: tail_hash(&mut file, whole as u64).map_err(|e| io(path, e))?,
        offset: whole as u64,
        transcript: read,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(role: &str, text: &str) -> String {
        format!(
            "{}\n",
            serde_json::json!({"type": role, "message": {"role": role, "content": text}})
        )
    }

    fn texts(read: &NewTurns) -> Vec<&str> {
        read.transcript
            .turns
            .iter()
            .map(|t| t.text.as_str())
            .collect()
    }

    #[test]
    fn each_read_returns_only_the_lines_appended_since_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut state = SessionState::default();
        std::fs::write(&path, line("user", "one") + &line("assistant", "two")).unwrap();
        let first = read_new(&path, &state).unwrap().unwrap();
        assert_eq!(texts(&first), ["one", "two"]);
        first.save(&mut state);
        assert_eq!(state.transcript_lines, 2);

        // Nothing new; then one whole line and one still being written.
        let again = read_new(&path, &state).unwrap().unwrap();
        assert!(again.transcript.turns.is_empty());
        let mut grown = std::fs::read_to_string(&path).unwrap();
        grown.push_str(&line("user", "three"));
        grown.push_str(r#"{"type":"assistant","message":{"role":"assis"#);
        std::fs::write(&path, &grown).unwrap();
        let next = read_new(&path, &state).unwrap().unwrap();
        assert_eq!(texts(&next), ["three"]);
        assert_eq!(next.transcript.turns[0].line, 3);
        next.save(&mut state);
        grown.push_str("tant\",\"content\":\"four\"}}\n");
        std::fs::write(&path, &grown).unwrap();
        let last = read_new(&path, &state).unwrap().unwrap();
        assert_eq!(texts(&last), ["four"]);
        last.save(&mut state);
        assert_eq!(state.transcript_lines, 4);
        assert_eq!(state.transcript_offset, grown.len() as u64);
    }

    #[test]
    fn a_replaced_or_shortened_file_is_read_whole_past_the_lines_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut state = SessionState::default();
        std::fs::write(&path, line("user", "alpha") + &line("assistant", "beta")).unwrap();
        read_new(&path, &state).unwrap().unwrap().save(&mut state);
        // Same length, other bytes before the offset: not the file that was read.
        std::fs::write(
            &path,
            line("user", "gamma") + &line("assistant", "delta") + &line("user", "epsilon"),
        )
        .unwrap();
        let read = read_new(&path, &state).unwrap().unwrap();
        assert_eq!(texts(&read), ["epsilon"]);
        // Shorter than the offset.
        std::fs::write(&path, line("user", "z")).unwrap();
        let read = read_new(&path, &state).unwrap().unwrap();
        assert!(read.transcript.turns.is_empty());
        assert!(
            read_new(&dir.path().join("none"), &state)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_json_document_is_read_whole_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.json");
        let mut state = SessionState::default();
        std::fs::write(&path, r#"{"messages":[{"type":"user","content":"hi"}]}"#).unwrap();
        let read = read_new(&path, &state).unwrap().unwrap();
        assert_eq!(texts(&read), ["hi"]);
        assert_eq!(read.offset, 0);
        read.save(&mut state);
        std::fs::write(
            &path,
            r#"{"messages":[{"type":"user","content":"hi"},{"type":"gemini","content":"yo"}]}"#,
        )
        .unwrap();
        assert_eq!(texts(&read_new(&path, &state).unwrap().unwrap()), ["yo"]);
    }
}
